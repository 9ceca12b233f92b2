"""Issue #24 on the Importances and Selection pages: one verdict per variable on a sample,
the leak sentence and its Exclude link, the variance impurity of a numeric target, and the
Selection page's undecided classes."""

from __future__ import annotations

import csv
import io
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest
from _browser import open_page
from _pages import page_module, query_dict, upload_csv, upload_frame
from dash.testing.wait import until

from pages._framework.datachoice import DataChoice
from pages._framework.view import context_for
from pages._server.jobs import Progress

draw = page_module("importances")


@pytest.fixture(scope="module")
def page(app_module):
    import pages.importances as module

    return module


def leaky_table(n: int = 300, seed: int = 3) -> pd.DataFrame:
    """``rel``: y copies it on 80 % of the rows; ``irr``: 3 levels, independent of y;
    ``leak``: y itself on 97 % of the rows (an outcome recorded after the fact)."""
    rng = np.random.default_rng(seed)
    rel = rng.integers(0, 2, n)
    irr = rng.integers(0, 3, n)
    y = np.where(rng.random(n) < 0.8, rel, 1 - rel)
    leak = np.where(rng.random(n) < 0.97, y, 1 - y)
    return pd.DataFrame({"rel": rel, "irr": [f"i{v}" for v in irr], "leak": leak, "y": y})


def _values(**over):
    return {"method": "exact", "max_features": 1, "max_depth": None, "criterion": "entropy",
            "k_semantics": "id3", "n_estimators": 30, "bootstrap": [], "random_state": 0,
            "spread": "se", "order": "columns", "show": "above", "n_permutations": 19, **over}


def _run(page, data, **over):
    settings = page.PARAMS.settings(_values(**over), context_for(data))
    out = page.compute(settings, data, Progress(None))
    return out, settings


@pytest.mark.parametrize("method", ["exact", "forest"])
def test_every_variable_gets_one_verdict_and_the_leak_a_warning(page, method):
    df = leaky_table()
    data = DataChoice.from_params(upload_frame(df, "leaky.csv"))
    out, settings = _run(page, data, method=method)
    view = draw.view_from_dict(out)
    v = view["verdicts"]
    assert v.variables == ("rel", "irr", "leak")
    # one verdict each, in the rows, the CSV and on the bars
    rows = draw.render_view(view)["rows"]
    assert [r["variable"] for r in rows] == ["rel", "irr", "leak"]
    assert all(r["verdict"] in ("relevant", "chance", "undecided") for r in rows)
    csv_rows = list(csv.DictReader(io.StringIO(
        draw.csv_text(view["result"], view["exact"], None, v))))
    assert [r["variable"] for r in csv_rows] == ["rel", "irr", "leak"]
    assert [r["verdict"] for r in csv_rows] == [r["verdict"] for r in rows]
    fig = draw.render_view(view)["figure"]
    assert list(fig.data[0].text) == [r["verdict"] for r in rows]
    # the relevant input and the leak are relevant; the 3-level noise is not (50 rows per
    # cell: Cochran's rule holds, so it is chance, not undecided)
    assert v.verdict_map() == {"rel": "relevant", "irr": "chance", "leak": "relevant"}
    # only the leak is flagged: 97 % copies, so its out-of-fold accuracy is near 0.97
    assert [w["column"] for w in v.warnings] == ["leak"]
    score = v.warnings[0]["score"]
    assert abs(score - np.mean(df["leak"] == df["y"])) < 0.02
    assert [r["warning"] != "" for r in csv_rows] == [False, False, True]
    # the sentence above the figure, and its link excluding the column
    rendered = draw.render(out, settings, data)
    leaks, cls = rendered[7], rendered[8]   # after the figures, table, note and convergence
    assert len(leaks) == 1 and "vi-hidden" not in cls
    text = leaks[0].children[0].children
    assert text.startswith("leak alone predicts the target") and f"{score:.2f}" in text
    link = leaks[0].children[1]
    assert link.children == "Exclude leak"
    query = query_dict(urlsplit(link.href).query)
    assert urlsplit(link.href).path == "/importances"
    assert parse_qs(urlsplit(link.href).query)["exclude"] == ["leak"]
    assert query["upload"] == data["upload"] and query["method"] == method
    # the link's data: the leak is gone, and so is the warning
    excluded, _ = DataChoice.from_page(query)
    out2, _ = _run(page, excluded, method=method)
    v2 = draw.view_from_dict(out2)["verdicts"]
    assert v2.variables == ("rel", "irr") and v2.warnings == ()
    assert v2.verdict_map()["rel"] == "relevant"


def test_above_chance_and_plugin_bars(page):
    data = DataChoice.from_params(upload_frame(leaky_table(), "leaky.csv"))
    out, settings = _run(page, data)
    view = draw.view_from_dict(out)
    v = view["verdicts"]
    above = draw.render_view(view, show="above")["figure"]
    plug = draw.render_view(view, show="plugin")["figure"]
    np.testing.assert_allclose(above.data[0].y, v.importances - v.null_mean)
    np.testing.assert_allclose(plug.data[0].y, view["result"].importances)
    # noise centres on 0 above chance, while its plug-in bar is positive
    assert plug.data[0].y[1] > 0 and abs(above.data[0].y[1]) < 3 * v.null_sd[1]
    # Show is only a drawing: the same cache key
    assert page.VIEW.key(data, {**settings, "show": "plugin"}, {}) == \
        page.VIEW.key(data, settings, {})
    # on an exact distribution neither Show nor R applies
    exact = DataChoice.from_page({"problem": "led"})[0]
    s = page.PARAMS.settings(_values(), context_for(exact))
    assert "show" not in s and "n_permutations" not in s
    # R below 19 is refused (R + 1 >= 1/alpha): in the browser and again in the job
    _, errors = page.PARAMS.validate(_values(n_permutations=9), context_for(data))
    assert "19" in errors["n_permutations"]


def _numeric_target(n: int = 240, seed: int = 5) -> pd.DataFrame:
    """y = 1000 x (x in 0, 1, 2) plus noise of SD 600: a variance near a million, x far
    from a leak (R\u00b2 near 0.65 < 0.9); z is noise."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, n)
    z = rng.integers(0, 2, n)
    y = 1000.0 * x + rng.normal(0, 600, n)
    return pd.DataFrame({"x": [f"x{v}" for v in x], "z": [f"z{v}" for v in z], "y": y})


def test_a_numeric_target_is_measured_by_its_variance(page):
    df = _numeric_target()
    data = DataChoice.from_params(upload_frame(df, "prices.csv"))
    ctx = context_for(data)
    assert ctx.extra["task"] == "regression"
    # only the variance is offered, and is the default
    assert [o["value"] for o in page.PARAMS.by_name["criterion"].options(ctx)] == ["squared_error"]
    values, _ = page.initial_values({}, data, ctx)
    assert values["criterion"] == "squared_error"
    _, errors = page.PARAMS.validate(_values(criterion="entropy"), ctx)
    assert "criterion" in errors
    # the methods that cannot measure it are disabled, with why
    options = {o["value"]: o for o in page.method_options(ctx)}
    assert {m for m, o in options.items() if o["disabled"]} == {"forest", "exact-rf", "exact-et"}
    assert "classification" in options["forest"]["label"]
    out, settings = _run(page, data, criterion="squared_error")
    view = draw.view_from_dict(out)
    result = view["result"]
    assert result.units == "variance of Y"
    # full depth: the importances add up to Var(Y) - E Var(Y | x, z), by hand
    y = df["y"].to_numpy()
    within = df.groupby(["x", "z"])["y"].agg(lambda s: s.var(ddof=0) * len(s)).sum() / len(df)
    explained = y.var() - within
    assert result.total == pytest.approx(explained, rel=1e-9)
    r = draw.render_view(view)
    assert explained > 1e5                 # 4 significant digits, thousands grouped
    shown = f"{round(explained, -int(np.log10(explained)) + 3):,.0f}"
    assert f"{shown} variance of Y" in r["theorem2"] and "Var(Y)" in r["theorem2"]
    header = {c["id"]: c for c in r["columns"]}
    assert "variance of Y" in header["importance"]["name"]
    assert header["importance"]["format"]["specifier"] == ",.4r"  # 4 digits, grouped
    assert "variance of Y" in r["figure"].layout.yaxis.title.text
    # the null permutes Y's own numbers (the variance reads them, not the binned Y)
    verdicts = view["verdicts"]
    assert verdicts.verdict_map()["x"] == "relevant" and verdicts.warnings == ()
    assert verdicts.null_sd[0] > 0 and verdicts.null_mean[0] < 0.1 * verdicts.importances[0]


# -- in the browser ---------------------------------------------------------------------
def _bar_text(dash_duo):
    return dash_duo.driver.execute_script(
        "const g = document.querySelector('#imp-graph .js-plotly-plot');"
        "return g && g.data && g.data.length ? g.data[0].text : null;")


def _cells(dash_duo, column, table="#imp-table"):
    """The texts of a table column, read in one script (a redraw cannot stale them)."""
    return dash_duo.driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0] + ' .ag-center-cols-container"
        " .ag-cell[col-id=\"' + arguments[1] + '\"]')).map(c => c.innerText.trim());",
        table, column)


@pytest.mark.browser
def test_an_upload_shows_verdicts_and_excludes_its_leak(dash_duo, dash_app, tmp_path):
    path = tmp_path / "leaky.csv"
    leaky_table().to_csv(path, index=False)
    open_page(dash_duo, dash_app, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "7", timeout=30)
    dash_duo.find_element("#data-source input[value='upload']").click()
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(path))
    dash_duo.wait_for_contains_text("#data-upload-note", "300 rows", timeout=30)
    dash_duo.wait_for_contains_text("#data-summary-exact", "Target y", timeout=30)
    until(lambda: "vi-job-running" not in dash_duo.find_element("#data-job")
          .get_attribute("class"), 30)
    dash_duo.driver.find_element("link text", "Importances").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/importances", 10)
    until(lambda: _bar_text(dash_duo) is not None and len(_bar_text(dash_duo)) == 3, 90)
    assert all(t in ("relevant", "chance", "undecided") for t in _bar_text(dash_duo))
    dash_duo.wait_for_contains_text("#imp-leaks", "leak alone predicts the target", timeout=30)
    dash_duo.wait_for_contains_text("#imp-job-status", "Done", timeout=60)
    until(lambda: _cells(dash_duo, "variable") == ["rel", "irr", "leak"], 30)
    until(lambda: (_cells(dash_duo, "verdict") or [None])[0] == "relevant", 30)
    dash_duo.find_element("#imp-leaks a.vi-leak-exclude").click()
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("exclude")
          == ["leak"], 30)
    until(lambda: _cells(dash_duo, "variable") == ["rel", "irr"], 90)
    until(lambda: _bar_text(dash_duo) is not None and len(_bar_text(dash_duo)) == 2, 90)
    until(lambda: "vi-hidden" in dash_duo.find_element("#imp-leaks").get_attribute("class"), 30)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_selection_on_a_sparse_sample_says_cannot_be_decided(dash_duo, dash_app):
    """LED drawn with 300 rows: the strong G-test of each segment conditions on the other
    six (2^6 strata x 10 classes), far below 5 rows a cell, so no class can be decided."""
    open_page(dash_duo, dash_app,
              "/selection?problem=led&sampling=sample&n=300&seed=0&R=3&trees=3")
    dash_duo.wait_for_contains_text("#sel-relevance-table", "cannot be decided from 300 rows",
                                    timeout=90)
    until(lambda: _cells(dash_duo, "relevance", "#sel-relevance-table")
          == ["undecided: cannot be decided from 300 rows"] * 7, 30)
    names = dash_duo.driver.execute_script(
        "const g = document.querySelector('#sel-relevance-graph .js-plotly-plot');"
        "return g && g.data ? g.data.map(t => t.name) : null;")
    assert names == ["undecided: cannot be decided from 300 rows"]
    dash_duo.wait_for_contains_text("#sel-relevance-text", "G-test", timeout=10)
    assert "0.05" in dash_duo.find_element("#sel-relevance-text").text


def test_a_large_sample_tests_with_fewer_trees_and_says_so(page):
    """xor with 8 irrelevant bits, 20,000 rows, 2,000 trees: (R + 1) x trees x rows must stay
    under 2e7, so the test's forests get 2e7 / (20 x 20,000) = 50 trees; the bars keep the
    2,000 and the page says so."""
    data = DataChoice.from_page({"problem": "xor:irrelevant=8", "sampling": "sample",
                                 "n": "20000"})[0]
    settings = page.PARAMS.settings(_values(method="forest", n_estimators=2000),
                                    context_for(data))
    from varimp_core.api import load_data

    prepared = load_data(problem="xor:irrelevant=8", n_samples=20000)
    assert page.verdict_size(19, prepared, page.core_settings(settings, "classification")) \
        == (19, 50)
    note = page.verdict_size_note(19, 19, 50, 2000)
    assert "forests of 50 trees" in note and "all 2,000 trees" in note
    assert page.verdict_size_note(19, 19, 2000, 2000) is None


def _churn(seed: int = 5, n: int = 600) -> pd.DataFrame:
    """Churn by construction: age (0.05 per year), a 35-level city (+1 for 17 cities, -1 for
    the others) and plan (pro +1) drive it; income, noise and weekday are drawn apart."""
    rng = np.random.default_rng(seed)
    age = rng.normal(45, 12, n).round(0)
    city = rng.integers(0, 35, n)
    plan = rng.choice(["basic", "plus", "pro"], n)
    score = 0.05 * (age - 45) + np.where(city < 17, 1.0, -1.0) + (plan == "pro") * 1.0
    return pd.DataFrame({"age": age, "income": rng.lognormal(10, 0.5, n).round(-2),
                         "city": [f"City{c:02d}" for c in city], "plan": plan,
                         "noise": rng.normal(size=n).round(3),
                         "weekday": rng.choice(list("MTWRFSU"), n),
                         "churn": np.where(score + rng.normal(0, 1, n) > 0.3, "yes", "no")})


def test_full_depth_on_a_sample_says_a_depth_limit_has_more_power(page):
    """On 600 rows, fully grown exact trees miss age and plan (their deep terms are noise);
    the page says a depth of 2 or 3 tests the first terms, and at depth 3 the verdicts are
    the construction's: age, city, plan relevant; income, noise, weekday at chance."""
    data = DataChoice.from_params(upload_frame(_churn(), "churn.csv", target="churn"))
    full, _ = _run(page, data, method="exact")
    assert any("Max depth of 2 or 3" in n for n in full["notes"])
    shallow, _ = _run(page, data, method="exact", max_depth=3)
    assert not any("Max depth of 2 or 3" in n for n in shallow["notes"])
    verdicts = draw.view_from_dict(shallow)["verdicts"].verdict_map()
    assert verdicts == {"age": "relevant", "income": "chance", "city": "relevant",
                        "plan": "relevant", "noise": "chance", "weekday": "chance"}
