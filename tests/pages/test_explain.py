"""The Why this row page (issue #28): computing and drawing, then the page in Chromium."""

from __future__ import annotations

import csv
import io
import itertools
import math
import os
from urllib.parse import urlsplit

import numpy as np
import pandas as pd
import pytest
from _browser import figure as _figure
from _browser import open_page, set_number, wait_for
from _pages import grid_cell_selector, grid_cells, upload_frame
from dash.testing.wait import until

from pages._framework.datachoice import DataChoice
from pages._framework.params import Context
from pages._server.jobs import Progress
from varimp_core.local.explain import RowExplanation
from varimp_core.local.local_mdi import LocalMDI
from varimp_core.problems.discrete import LED_SEGMENTS


@pytest.fixture(scope="module")
def page(app_module):
    import pages.explain as module

    return module


def _settings(page, p, **kw):
    return page.PARAMS.settings({"row": 0, "method": "et", "n_estimators": 20,
                                 "max_features": 1, "random_state": 0, **kw}, Context(p))


def _run(page, data, **kw):
    settings = _settings(page, data.n_features(), **kw)
    out = page.compute(settings, data, Progress(None))
    return out, settings


def _problem(spec, **kw) -> DataChoice:
    return DataChoice.from_params({"source": "problem", "problem": spec, **kw})


def _locally_irrelevant(digits: np.ndarray, x: np.ndarray) -> list[int]:
    """Inputs m with p(y | x_B, x_m) = p(y | x_B) for every B of the others (Sutera et al.
    2021), from a table of equally likely rows, one per class ``y`` (the LED's digits)."""
    p = digits.shape[1]
    found = []
    for m in range(p):
        others = [j for j in range(p) if j != m]

        def same(B):
            rows = np.all(digits[:, list(B)] == x[list(B)], axis=1)
            given = rows & (digits[:, m] == x[m])
            return np.allclose(rows / rows.sum(), given / given.sum())
        if all(same(B) for k in range(p) for B in itertools.combinations(others, k)):
            found.append(m)
    return found


# -- computing and drawing ---------------------------------------------------------------
def test_led_one_row_locally_irrelevant_inputs_get_zero(page):
    """The "1" of the LED (segments c and f lit).  By the segment table, no segment is
    locally irrelevant there: every segment's value changes p(digit) given nothing (the
    top segment, off, leaves 1, 4: with no other segment known it halves the candidates to
    2 of 10). Two added fair bits are: they change nothing given any B.  The exact local MDI
    gives exactly those 0, the others > 0, and adds up to H(Y) - H(Y | X = x) = log2 10."""
    seg = np.array([[int(s[d]) for s in LED_SEGMENTS] for d in range(10)])
    one = seg[1]
    assert one.tolist() == [0, 0, 1, 0, 0, 1, 0]
    assert _locally_irrelevant(seg, one) == []
    # with the two fair bits: 40 equally likely rows (digit, b1, b2), 10 classes
    bits = np.array(list(itertools.product(range(10), (0, 1), (0, 1))))
    table = np.column_stack([seg[bits[:, 0]], bits[:, 1:]])
    irrelevant = []
    for m in range(9):  # p(y | x_B, x_m) against p(y | x_B), y the digit of each row
        others = [j for j in range(9) if j != m]
        x = np.concatenate([one, [0, 0]])

        def law(rows):
            return np.bincount(bits[rows, 0], minlength=10) / rows.sum()
        if all(np.allclose(law(np.all(table[:, list(B)] == x[list(B)], axis=1)),
                           law(np.all(table[:, list(B) + [m]] == x[list(B) + [m]], axis=1)))
               for k in range(9) for B in itertools.combinations(others, k)):
            irrelevant.append(m)
    assert irrelevant == [7, 8]

    data = _problem("led:irrelevant=2")
    out, settings = _run(page, data, method="exact", row=0)
    e = RowExplanation.from_dict(out["explanation"])
    assert e.x.tolist() == [0, 0, 1, 0, 0, 1, 0, 0, 0]          # row 0 is the "1"
    np.testing.assert_allclose(e.local_mdi[irrelevant], 0, atol=1e-12)
    assert (e.local_mdi[:7] > 0.01).all()
    assert e.local_mdi.sum() == pytest.approx(math.log2(10), abs=1e-12)
    # the Home preset's sentence: its link is this computation, its numbers these
    from pages._framework.lessons import TEACH
    (title, text, href), = [t for t in TEACH if t[0] == "Why this row: LED"]
    assert href == "/explain?problem=led:irrelevant=2&method=exact&row=0"
    assert e.local_mdi[0] == pytest.approx(1.3303, abs=1e-4) and "1.33 of" in text
    assert (seg[:, 2].sum(), seg[:, 5].sum()) == (8, 9) and "8 and 9 digits" in text
    assert e.local_mdi[0] == e.local_mdi.max()                   # the top segment, off
    assert np.isnan(e.treeshap).all() and "TreeSHAP" in e.notes["treeshap"]
    fig, strip, values, ident, ident_class, summary, *_ = page.render(out, settings, data)
    assert f"{math.log2(10):.4f}" in ident and "H(Y | X = x)" in ident
    assert ident_class == "vi-identity"
    assert [a.text for a in fig.layout.annotations[:4]][0].startswith("<b>Local MDI</b>")
    said = [a.text.replace("<br>", " ") for a in fig.layout.annotations[:4]]  # lines wrap
    assert "information about Y" in said[0] and "predicted P(1)" in said[1]
    assert "first positions" in said[3]
    assert "= global MDI" in strip.layout.title.text
    assert "40 distinct rows" in summary


def test_xor_each_bit_matters_through_the_other_at_every_row(page):
    data = _problem("xor:irrelevant=2")
    out, settings = _run(page, data, method="exact", row=5)
    entry = page.cached_entry(out["all"])
    lm = LocalMDI.from_dict(entry["local"])
    np.testing.assert_allclose(lm.values, np.tile([0.5, 0.5, 0, 0], (16, 1)), atol=1e-12)
    np.testing.assert_allclose(lm.weighted_mean(), lm.global_importances, atol=1e-12)
    from pages._framework.lessons import TEACH
    (title, text, href), = [t for t in TEACH if t[0] == "Why this row: XOR"]
    assert href == "/explain?problem=xor:irrelevant=2&method=exact&row=0"
    assert "1/2 bit" in text and "irrelevant ones 0" in text


def _upload_like(n=120, seed=3) -> DataChoice:
    """A category (text), a number with missing values, a noise column and a binary target."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.normal(size=n)
    size[rng.choice(n, 10, replace=False)] = np.nan
    noise = rng.normal(size=n)
    y = ((colour == "red") ^ (np.nan_to_num(size) > 0)).astype(int)
    df = pd.DataFrame({"colour": colour, "size": size, "noise": noise, "y": y})
    return DataChoice.from_params(upload_frame(df, "shop.csv"))


def test_upload_every_row_has_p_explanations_per_method_and_the_mean_is_the_global(page):
    data = _upload_like()
    out, settings = _run(page, data, row=4, method="et", n_estimators=15)
    entry = page.cached_entry(out["all"])
    lm = LocalMDI.from_dict(entry["local"])
    p = lm.n_features
    assert lm.variables == ("colour", "size", "noise") and lm.n_rows == 120
    # no bootstrap, every learning row: the mean of the local MDI is the forest's MDI
    np.testing.assert_allclose(lm.values.mean(axis=0), lm.global_importances, rtol=0,
                               atol=1e-9)
    text, name = page.rows_csv(out, settings, data)
    assert name.startswith("varimp-explain-") and name.endswith(".csv")
    lines = list(csv.DictReader(io.StringIO(text)))
    assert len(lines) == 120 * p
    by_row = pd.DataFrame(lines).groupby("row")
    assert (by_row.size() == p).all()
    for method in ("local_mdi", "saabas", "ciss"):
        assert all(line[method] != "" for line in lines)
    shap_rows = {line["row"] for line in lines if line["treeshap"] != ""}
    assert len(shap_rows) == entry["n_shap"] > 0
    assert {line["value"] for line in lines if line["variable"] == "colour"} == \
        {"red", "green", "blue"}                                 # labels, not codes
    assert "missing" in {line["value"] for line in lines if line["variable"] == "size"}
    # the chosen row: four explanations, its values as labels
    e = RowExplanation.from_dict(out["explanation"])
    assert np.isfinite(e.treeshap).all() and np.isfinite(e.saabas).all()
    assert e.saabas.sum() + e.saabas_bias == pytest.approx(e.prediction, abs=1e-9)
    assert e.treeshap.sum() + e.treeshap_bias == pytest.approx(e.prediction, abs=1e-6)
    values = page.render(out, settings, data)[2]
    shown = str(values)
    assert any(c in shown for c in ("red", "green", "blue"))


def test_a_row_beyond_the_data_is_a_sentence_in_the_job(page):
    data = _upload_like()
    with pytest.raises(ValueError, match="Row 500 is not a row of this data: choose a row "
                                         "from 0 to 119"):
        _run(page, data, row=500, n_estimators=5)
    assert page.PARAMS.validate({"row": -1, "method": "et", "n_estimators": 5,
                                 "max_features": 1, "random_state": 0},
                                Context(3))[1]["row"]


def test_a_row_outside_treeshaps_sample_gets_its_own(page, monkeypatch):
    monkeypatch.setattr(page, "MAX_SHAP_ROWS", 5)
    data = _upload_like(n=60, seed=9)
    out, _ = _run(page, data, row=0, n_estimators=7, random_state=4)
    entry = page.cached_entry(out["all"])
    outside = next(r for r, b in zip(entry["rows"], entry["treeshap_bias"]) if b is None)
    out2, _ = _run(page, data, row=outside, n_estimators=7, random_state=4)
    e = RowExplanation.from_dict(out2["explanation"])
    assert np.isfinite(e.treeshap).all()
    assert e.treeshap.sum() + e.treeshap_bias == pytest.approx(e.prediction, abs=1e-6)


def test_a_click_on_a_point_picks_its_row(page):
    assert page.pick_row({"points": [{"customdata": 17}]}) == 17
    assert page.pick_row({"points": [{"customdata": "X1"}]}) is page.no_update
    assert page.pick_row(None) is page.no_update


def test_a_click_on_a_row_of_the_search_table_picks_it(page):
    # the grid's cellClicked: rowId is the row's "key" (its index as a string)
    assert page.pick_table_row({"rowIndex": 0, "colId": "c1", "rowId": "37"}) == 37
    assert page.pick_table_row({"rowIndex": 0, "colId": "c1"}) is page.no_update
    assert page.pick_table_row({"rowIndex": 0, "rowId": "not a row"}) is page.no_update
    assert page.pick_table_row(None) is page.no_update


def _shop(n=120, seed=3) -> pd.DataFrame:
    """An analyst's upload: an identifier, a text category, a number missing at rows 3 and 7."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"customer_id": [f"C{i:05d}" for i in rng.permutation(n)],
                       "colour": rng.choice(["red", "green", "blue"], n),
                       "size": np.round(rng.normal(size=n), 3)})
    df.loc[[3, 7], "size"] = np.nan
    df["y"] = ((df["colour"] == "red") ^ (df["size"].fillna(0) > 0)).astype(int)
    return df


def test_the_search_table_shows_each_row_by_its_labels_and_the_id_is_excluded(page):
    df = _shop()
    data = DataChoice.from_params(upload_frame(df, "shop.csv"))
    out, settings = _run(page, data, row=7, n_estimators=6, random_state=2)
    table, columns, style = page.search_table(page.cached_entry(out["all"]), 7)
    # the identifier column is excluded by the upload's default roles
    assert [c["name"] for c in columns] == ["row", "colour", "size"]
    assert len(table) == 120 and [t["id"] for t in table] == list(range(120))
    for t in table:  # each cell is the uploaded value: a label, "missing", or the number
        r = t["id"]
        assert t["c0"] == df.loc[r, "colour"]
        if np.isnan(df.loc[r, "size"]):
            assert t["c1"] == "missing"
        else:
            assert float(t["c1"]) == pytest.approx(df.loc[r, "size"], abs=1e-9)
    # the grid's getRowStyle highlights row 7 alone
    assert [c["condition"] for c in style["styleConditions"]] == ["params.data.id == 7"]
    shown = str(page.render(out, settings, data)[2])
    assert "missing" in shown and "customer_id" not in shown
    assert f"{df.loc[7, 'colour']}" in shown


def test_the_search_table_is_bounded_in_cells(page):
    """60,000 cells: 60 variables give 1,000 rows; 3 give every row up to 5,000 explained."""
    assert page.table_rows(5000, 60) == 1000
    assert page.table_rows(5000, 3) == 5000
    assert page.table_rows(5000, 200) == 1000          # at least 1,000 rows
    assert page.table_rows(40, 9) == 40


class _Recorder:
    """A job's progress: its messages and published results in order; Cancel once
    ``stop_after`` TreeSHAP calls have been reported (None: never)."""

    def __init__(self, stop_after=None):
        self.events, self.published, self.stop_after = [], [], stop_after

    def __call__(self, done, total, message):
        self.events.append(message)

    def publish(self, result):
        self.published.append(result)
        self.events.append("publish")

    def should_stop(self):
        calls = sum(m.startswith("TreeSHAP:") for m in self.events)
        return self.stop_after is not None and calls >= self.stop_after


def test_the_first_figure_comes_before_treeshap_and_cancel_keeps_what_was_finished(
        page, monkeypatch):
    monkeypatch.setattr(page, "SHAP_CHUNK", 4)
    data = _upload_like(n=120, seed=11)
    settings = _settings(page, data.n_features(), row=50, n_estimators=9, random_state=5)
    progress = _Recorder(stop_after=2)
    out = page.compute(settings, data, progress)
    # the first figure was published before any TreeSHAP call, without TreeSHAP
    first_shap = next(i for i, m in enumerate(progress.events) if m.startswith("TreeSHAP:"))
    assert progress.events.index("publish") < first_shap
    e0 = RowExplanation.from_dict(progress.published[0]["explanation"])
    assert np.isnan(e0.treeshap).all() and "running" in e0.notes["treeshap"]
    assert e0.saabas.sum() + e0.saabas_bias == pytest.approx(e0.prediction, abs=1e-9)
    # Cancel after two calls of 4 rows: 8 rows have TreeSHAP, the chosen row first
    assert out["partial"] is True
    entry = out["entry"]
    done = [i for i, b in enumerate(entry["treeshap_bias"]) if b is not None]
    assert len(done) == 8 and entry["rows"].index(50) in done
    # 9 trees on 120 rows have at most 9 x 239 nodes: TreeSHAP's sample is every row
    assert entry["n_shap"] == 120
    for i in done:  # shap's efficiency: the values add up to the prediction
        assert sum(entry["treeshap"][i]) + entry["treeshap_bias"][i] == \
            pytest.approx(entry["prediction"][i], abs=1e-6)
    e = RowExplanation.from_dict(out["explanation"])
    assert np.isfinite(e.treeshap).all()
    summary = page.render(out, settings, data)[5]
    assert "TreeSHAP so far: 8 of 120 rows." in summary
    # nothing cached: the same settings compute again
    key = page.cache.key_for("explain-rows", data.as_dict,
                             {k: settings[k] for k in page.ALL_ROWS_KEYS})
    assert page.cache.get_json(key) is None
    again = _Recorder()
    page.compute(settings, data, again)
    assert sum(m.startswith("TreeSHAP:") for m in again.events) == 30    # 120 rows / 4
    assert page.cache.get_json(key) is not None


def test_cancel_before_the_first_figure_is_a_sentence(page):
    data = _upload_like(n=80, seed=12)
    settings = _settings(page, data.n_features(), n_estimators=4, random_state=6)
    with pytest.raises(ValueError, match="Cancelled before the first figure"):
        page.compute(settings, data, _Recorder(stop_after=0))


# -- in Chromium -----------------------------------------------------------------------------
def _bars(dash_duo):
    fig = _figure(dash_duo, "explain-row-graph")
    return fig if fig and len(fig) == 4 and all(t["x"] for t in fig) else None


@pytest.mark.browser
def test_led_row_four_explanations_and_labels(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/explain?problem=led&trees=20")
    wait_for(lambda: _bars(dash_duo), 90, "the four explanations")
    dash_duo.wait_for_contains_text("#explain-values", "X1 = ", timeout=20)
    set_number(dash_duo, "#explain-row", 3)
    dash_duo.wait_for_contains_text("#explain-strip-graph", "row 3", timeout=60)
    wait_for(lambda: _bars(dash_duo), 30, "the four explanations of row 3")
    assert "row=3" in dash_duo.driver.current_url
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_home_upload_journey_labels_search_then_leaving_mid_job_ends_it(dash_duo, dash_app,
                                                                         tmp_path):
    """Home's upload preset, a CSV with an identifier, a text category and missing values
    uploaded on the Data page, then Why this row: the four explanations, labels (not codes),
    the identifier excluded; a row found by its colour in the table; then a long job is left."""
    import psutil
    from pages._framework.lessons import TEACH

    df = _shop()
    path = tmp_path / "shop.csv"
    df.to_csv(path, index=False)
    dash_duo.driver.set_window_size(1400, 900)
    open_page(dash_duo, dash_app, "/")
    index = [t[0] for t in TEACH].index("Why this row: your CSV")
    dash_duo.find_element(f"#home-demo-{index}").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/data", 20)
    dash_duo.wait_for_element("#data-upload input[type='file']", timeout=30)
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(path))
    dash_duo.wait_for_contains_text("#data-summary-exact", "Target y", timeout=60)
    until(lambda: "vi-job-running" not in dash_duo.find_element("#data-job")
          .get_attribute("class"), 60)
    dash_duo.driver.find_element("link text", "Why this row").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/explain", 20)
    wait_for(lambda: _bars(dash_duo), 90, "the four explanations")
    assert [t["y"] for t in _bars(dash_duo)] == [["colour", "size"]] * 4
    dash_duo.wait_for_element("#explain-values li", timeout=30)
    # row 0 of the file, by its labels; the identifier is no input
    shown = dash_duo.find_element("#explain-values").text
    assert f"colour = {df.loc[0, 'colour']}" in shown and "customer_id" not in shown
    # search: rows whose size is missing (rows 3 and 7 of the file), then click one
    wait_for(lambda: len(grid_cells(dash_duo, "#explain-table", "id")) > 0, 30, "the table")
    filters = dash_duo.find_elements("#explain-table .ag-floating-filter")
    assert len(filters) == 3                                  # row, colour, size
    filters[2].find_element("css selector", "input").send_keys("missing\n")
    wait_for(lambda: sorted(grid_cells(dash_duo, "#explain-table", "id")) == ["3", "7"], 20,
             "rows 3 and 7")
    cell = dash_duo.driver.execute_script(   # found in one script: no stale element
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".find(c => c.innerText.trim() === '7');", grid_cell_selector("#explain-table", "id"))
    cell.click()
    until(lambda: dash_duo.find_element("#explain-row").get_attribute("value") == "7", 10)
    wait_for(lambda: "size = missing" in dash_duo.find_element("#explain-values").text
             and f"colour = {df.loc[7, 'colour']}" in
             dash_duo.find_element("#explain-values").text, 60, "row 7's values")
    wait_for(lambda: _bars(dash_duo), 60, "the four explanations of row 7")
    assert "row=7" in dash_duo.driver.current_url

    def job_processes():
        return [c for c in psutil.Process(os.getpid()).children(recursive=True)
                if c.is_running() and c.status() != psutil.STATUS_ZOMBIE
                and "chrom" not in c.name()]

    before = {c.pid for c in job_processes()}
    big = _problem("led", sampling="sample", n=5000)
    dash_duo.driver.get(dash_duo.server_url + "/explain?trees=1000&K=7&" + big.query())
    running = ("var j = document.querySelector('#explain-job');"
               "return !!j && j.className.indexOf('vi-job-running') >= 0;")

    def job_running():
        try:
            return dash_duo.driver.execute_script(running)
        except Exception:  # the page is still loading (a busy machine): ask again
            return False
    until(job_running, 60)
    until(lambda: {c.pid for c in job_processes()} - before, 10)
    dash_duo.driver.find_element("link text", "Learn").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/learn", 10)
    until(lambda: not ({c.pid for c in job_processes()} - before), 15)
