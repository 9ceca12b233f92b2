"""The Selection page: its parameters, computing and rendering, then the page in Chromium."""

from __future__ import annotations

import dash
import numpy as np
import pytest
from _browser import image_format, open_link_with_note, open_page, set_number, url_query, wait_for
from _browser import traces_by_meta as _traces
from _pages import query_dict as _query
from _pages import registered_page, store_csv, upload_csv
from _pages import page_module

from pages._framework import datasource

from pages._server import jobs
from pages._framework.page_frame import data_label
from pages._framework.datachoice import DataChoice
from varimp_core.problems.registry import get_problem
from pages._framework.params import Context
from varimp_core.api import compute_importances
from varimp_core.studies.nulls import permutation_null
from varimp_core.exact.relevance import relevance
from varimp_core.studies.rs_srs import SubspaceComparison
from varimp_core.studies.selection import madelon_curves

study = page_module("selection")

XOR = "xor:irrelevant=2"


@pytest.fixture(scope="module")
def page(app_module):
    import pages.selection as module

    return module


class _Stop(jobs.Progress):
    """A job's progress whose Cancel is asked after ``after`` looks (None: never)."""

    def __init__(self, after=None):
        super().__init__(None)
        self.after, self.looks = after, 0

    def should_stop(self) -> bool:
        self.looks += 1
        return self.after is not None and self.looks > self.after


def _data(problem=XOR) -> DataChoice:
    return DataChoice.from_page({"problem": problem})[0]


def _null_values(**kw):
    return {**dict(tol=None, n_permutations=19, n_estimators=10, method="forest",
                   random_state=0, n_samples=300), **kw}


def _rs_values(**kw):
    return {**dict(source="480", subspace_size=20, alpha=0.5, max_features=None,
                   n_estimators=10, min_sampled=5, beta=0.95, n_seeds=1, show="srs"), **kw}


def _null(page, data=None, progress=None, **kw):
    data = data or _data()
    store = data.to_store()
    return page.NULL_VIEW.run(_null_values(**kw), store, {"data_store": store},
                              progress or _Stop())


def _rs(page, data=None, progress=None, **kw):
    data = data or _data()
    store = data.to_store()
    return page.RS_VIEW.run(_rs_values(**kw), store, {"data_store": store}, progress or _Stop())


def _draw(view, out, settings, data):
    return view.draw(out, settings, data, {"data_store": data.to_store()})


# -- parameters and URL -----------------------------------------------------------------------
def test_default_state_is_light(page):
    rs, notes = page.RSS.from_url({}, Context(7))
    null, more = page.NULLS.from_url({}, Context(7))
    assert notes == more == []
    assert (rs["source"], rs["n_estimators"], rs["n_seeds"], rs["subspace_size"],
            null["n_permutations"], null["n_estimators"]) == ("480", 300, 1, 50, 50, 50)


def test_link_state_round_trips_through_the_url(page):
    query = {"problem": XOR, "tol": "0.01", "R": "30", "trees": "7", "method": "sklearn-et",
             "null_seed": "4", "N": "250", "rs": "1480", "q": "40", "alpha": "0.25",
             "K": "7", "T": "120", "L": "3", "beta": "0.9", "seeds": "2", "show": "rs"}
    ctx = Context(4)
    null, notes = page.NULLS.from_url(query, ctx)
    rs, more = page.RSS.from_url(query, ctx)
    assert notes == more == []
    link = "&".join([_data().query(), page.NULLS.query(page.NULLS.settings(null, ctx)),
                     page.RSS.query(page.RSS.settings(rs, ctx))])
    again = _query(link)
    assert page.NULLS.from_url(again, ctx) == (null, [])
    assert page.RSS.from_url(again, ctx) == (rs, [])
    assert again["rs"] == "1480" and again["show"] == "rs" and again["null_seed"] == "4"
    assert DataChoice.from_page(again)[0] == _data()


@pytest.mark.parametrize("query,words", [
    ({"R": "999999"}, "number of permutations R"),
    ({"T": "0"}, "number of trees T"),
    ({"rs": "7"}, "RS/SRS problem"),
    ({"beta": "2"}, "\u03b2"),
    ({"seeds": "99"}, "number of seeds was ignored"),
])
def test_bad_links_fall_back_with_a_sentence(page, query, words):
    _, notes = page.NULLS.from_url(query, Context(4))
    _, more = page.RSS.from_url(query, Context(4))
    notes += more
    assert len(notes) == 1 and words in notes[0]
    assert "Traceback" not in notes[0]


@pytest.mark.parametrize("change,words", [
    (dict(beta=0), "Fraction \u03b2 of trees must be a number from 0.01 to 1"),
    (dict(alpha="x"), "Share \u03b1 of the subspace must be a number"),
    (dict(n_estimators=None), "Enter number of trees T"),
    (dict(n_estimators=6000), "Number of trees T must be a whole number from 1 to 5,000"),
])
def test_out_of_range_rs_controls_are_sentences_and_nothing_runs(page, change, words):
    settings, errors = page.RSS.validate(_rs_values(**change), Context(4))
    assert settings == {} and len(errors) == 1
    assert words in next(iter(errors.values()))


@pytest.mark.parametrize("change,words", [
    (dict(subspace_size=501), "Subspace size q must be a whole number from 1 to 500"),
    (dict(n_seeds=10, n_estimators=5000), "more than the limit"),
    (dict(max_features=22), "from 1 to 21"),
])
def test_rs_settings_that_cannot_run_together_are_sentences(page, change, words):
    with pytest.raises(ValueError, match=words):
        _rs(page, **change)


def test_bad_null_controls_are_sentences(page):
    with pytest.raises(ValueError, match="R \u00d7 T"):
        _null(page, n_permutations=1000, n_estimators=1000)
    _, errors = page.NULLS.validate(_null_values(tol=-1), Context(4))
    assert "Threshold tol must be a number from 0 to 1" in errors["tol"]


def test_caps_come_from_the_environment(page, monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_TREES", "100")
    assert study.max_rs_trees() == 100 and study.max_null_trees() == 100
    _, errors = page.RSS.validate(_rs_values(n_estimators=300), Context(4))
    assert "from 1 to 100" in errors["n_estimators"]
    assert "T \u2264 100" in study.caps_text()


# -- computing --------------------------------------------------------------------------
def test_relevance_and_null_are_the_core_numbers(page):
    out, settings, data = _null(page)
    _, texts, rows, pvalues, null_texts, _, _ = _draw(page.NULL_VIEW, out, settings, data)
    table = datasource.load_prepared(data.as_dict).table
    r = relevance(table)
    assert [row["relevance"] for row in rows] == list(r.relevance)
    assert [row["degree"] for row in rows] == [1, 1, "", ""]
    assert "Exact" in texts[0].children
    figure = _draw(page.NULL_VIEW, out, settings, data)[0]
    strong = next(t for t in figure.data if t.meta == "class-strong")
    exact = compute_importances(table, method="exact", max_features=1).importances
    assert list(strong.y) == pytest.approx(exact[:2].tolist(), abs=0)
    sample = datasource.load_prepared(dict(data.as_dict, sampling="sample", n=300, seed=0))
    pn = permutation_null(sample, n_permutations=19, n_estimators=10, max_features=1,
                          random_state=0)
    pv = next(t for t in pvalues.data if t.meta == "p-value")
    assert np.array_equal(pv.y, pn.p_values)
    assert "Above the 95 % quantile of their null (\u2605): X1, X2." in null_texts[1].children
    assert page.NULL_VIEW.cached(data, settings, {"data_store": data.to_store()}) is not None


def test_plugin_relevance_uses_and_shows_tol(page):
    data = DataChoice.from_params(dict(_data("led").as_dict, sampling="sample", n=500, seed=0))
    out, settings, data = _null(page, data=data, tol=0.2)
    assert out["relevance"]["exact"] is False and out["n_samples"] is None
    assert out["relevance"]["relevance"]["tol"] == 0.2
    sentence = _draw(page.NULL_VIEW, out, settings, data)[1][0].children
    assert "Plug-in" in sentence and "tol = 0.2 bits" in sentence


def test_too_many_inputs_for_relevance_is_a_sentence_not_an_error(page):
    out, settings, data = _null(page, data=_data("madelon:irrelevant=30,samples=200"),
                                n_permutations=3, n_estimators=2)
    assert out["relevance"]["relevance"] is None and "50 inputs" in out["relevance"]["message"]
    assert "50 inputs" in _draw(page.NULL_VIEW, out, settings, data)[1][0].children


def test_rs_study_equals_madelon_curves(page):
    out, settings, data = _rs(page, n_estimators=10, n_seeds=2, subspace_size=20)
    expected = madelon_curves([480], seeds=[0, 1], n_estimators=10, subspace_size=20)
    got = SubspaceComparison.from_dict(out).curves
    for c in ("n_trees", "auprc", "accuracy", "n_selected"):
        assert np.allclose(got[c].to_numpy(float), expected[c].to_numpy(float),
                           equal_nan=True, rtol=0, atol=0), c
    assert list(got["method"]) == list(expected["method"])
    _, _, selected, texts, _, _ = _draw(page.RS_VIEW, out, {**settings, "show": "rs"}, data)
    assert "RS: " in selected.layout.title.text
    assert "Precision" in texts[0].children or "n/a" in texts[0].children


def test_madelon_study_does_not_depend_on_the_pages_data(page):
    first, _, _ = _rs(page, n_estimators=12)
    calls = []
    again, _, _ = _rs(page, data=_data("led"), progress=lambda *a: calls.append(a),
                      n_estimators=12, show="rs")
    assert again == first and calls == []       # read back, not recomputed


def test_rs_on_the_current_data_and_a_regression_target(page):
    out, _, _ = _rs(page, source="data", subspace_size=4, n_estimators=30)
    assert out["p"] == 4 and out["truth_known"]
    with pytest.raises(ValueError, match="Subspace size q"):
        _rs(page, source="data", subspace_size=5)
    with pytest.raises(ValueError, match="regression"):
        _rs(page, data=_data("diabetes"), source="data", subspace_size=3, n_estimators=5)


def test_cancel_keeps_the_finished_trees_and_caches_nothing(page):
    out, settings, data = _rs(page, progress=_Stop(after=25), n_estimators=40,
                              subspace_size=10)
    assert out["partial"] and 0 < out["trees_done"] < 80
    assert page.RS_VIEW.cached(data, settings, {"data_store": data.to_store()}) is None
    note = _draw(page.RS_VIEW, out, settings, data)[4]
    assert note == f"Partial result: cancelled after {out['trees_done']:,} of 80 trees."


def test_null_cancel_shows_a_partial_note(page):
    out, settings, data = _null(page, progress=_Stop(after=3), n_permutations=40,
                                n_estimators=5, random_state=9)
    done = len(out["null"]["null"]["__ndarray__"])
    assert out["partial"] and 0 < done < 40
    assert page.NULL_VIEW.cached(data, settings, {"data_store": data.to_store()}) is None
    assert _draw(page.NULL_VIEW, out, settings, data)[5] == \
        f"Partial result: cancelled after {done} of 40 permutations."


def test_csv_exports_are_safe_to_open(page):
    rows = "\n".join(f"{i % 3},{i % 2},{(i + i // 3) % 2}" for i in range(60))
    info = store_csv("=evil,b,y\n" + rows, "t.csv")
    data = DataChoice.from_params({"source": "upload", "upload": info["key"], "file": "t.csv",
                                   "target": "y"})
    out, settings, data = _null(page, data=data, n_permutations=5, n_estimators=3)
    text = study.csv_text("pvalues", out)
    assert "'=evil" in text and "\n=evil" not in text and "relevance" in text.splitlines()[0]
    assert page.make_csv("pvalues")(out, settings, data)[1] == "varimp-selection-t-pvalues.csv"
    out, settings, data = _rs(page, n_estimators=10)
    assert study.csv_text("curves", out).startswith("method,p,seed,n_trees,auprc")
    assert "win_rate" in study.csv_text("selected", out).splitlines()[0]
    assert page.make_csv("curves")(out, settings, data)[1] == \
        "varimp-selection-madelon-480-curves.csv"


def test_the_header_names_the_chosen_data(page):
    header = next(c for c in page.layout(problem=XOR).children
                  if getattr(c, "className", None) == "vi-dataset")
    assert header.children[1].id == "sel-dataset"
    assert header.children[1].children == "xor:irrelevant=2 (exact, 4 inputs)"
    store, _ = page.choose_data("led", _data().to_store())  # the page's problem dropdown
    assert data_label(store) == "led (exact, 7 inputs)"


def test_page_is_registered(dash_app):
    page = registered_page("pages.selection")
    assert (page["path"], page["name"], page["order"]) == ("/selection", "Selection", 8)


# -- in the browser ----------------------------------------------------------------------
_SMALL = f"/selection?problem={XOR}&R=19&trees=10&T=20&q=20"


def _pvalues(dash_duo):
    t = _traces(dash_duo, "#sel-pvalue-graph", "p-value")
    return t[0][2] if t else None


@pytest.mark.browser
def test_page_loads_and_a_control_change_updates_the_figure(dash_duo, dash_app):
    open_page(dash_duo, dash_app, _SMALL)
    strong = wait_for(lambda: _traces(dash_duo, "#sel-relevance-graph", "class-strong"),
                      what="the relevance classes")
    assert strong[0][1] == ["X1", "X2"]
    assert wait_for(lambda: (lambda p: p if p and p[0] == pytest.approx(1 / 20) else None)(
        _pvalues(dash_duo)), what="p-values of R = 19")
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean"), what="the RS/SRS curves")
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#sel-null-r", "39")
    wait_for(lambda: (lambda p: p and p[0] == pytest.approx(1 / 40))(_pvalues(dash_duo)),
             what="p-values of R = 39")
    wait_for(lambda: url_query(dash_duo).get("R") == "39", what="R=39 in the address bar")
    assert image_format(dash_duo, "#sel-pvalue-graph") == "png"
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_the_header_follows_the_problem_dropdown(dash_duo, dash_app):
    open_page(dash_duo, dash_app, _SMALL)
    dash_duo.wait_for_text_to_equal("#sel-dataset", "xor:irrelevant=2 (exact, 4 inputs)",
                                    timeout=20)
    wait_for(lambda: _pvalues(dash_duo), what="the p-values")
    wait_for(lambda: dash_duo.find_element("#sel-null-fieldset").get_attribute("disabled")
             is None, what="the controls to come back")
    dash_duo.select_dcc_dropdown("#sel-null-problem",
                                 value="LED \u2014 7 segments (Louppe et al. 2013)")
    dash_duo.wait_for_text_to_equal("#sel-dataset", "led (exact, 7 inputs)", timeout=20)
    wait_for(lambda: url_query(dash_duo).get("problem") == "led", what="led in the address bar")
    wait_for(lambda: (lambda t: t and len(t[0][1]) == 5)(             # LED: 5 strong, 2 weak
        _traces(dash_duo, "#sel-relevance-graph", "class-strong")), what="LED's classes")
    assert dash_duo.get_logs() == []


def test_the_madelon_study_says_it_is_not_on_the_users_data(page):
    """Each Madelon choice is named as a built-in benchmark with its irrelevant count (the
    study ran under the user's data without saying so; issue #26); the data's study is not."""
    for k in (480, 5480):
        text = page.rs_source_note(str(k))
        assert "Madelon, a built-in benchmark" in text and f"{k:,} irrelevant" in text
        assert "not on your data" in text
    assert page.rs_source_note("data") == ""
    assert page.show_rs_source("1480")[1] == "vi-notes"
    assert page.show_rs_source("data") == ("", "vi-hidden")


@pytest.mark.browser
def test_the_madelon_sentence_follows_the_rs_problem(dash_duo, dash_app):
    """On the session's data (XOR here), the RS/SRS card opens on Madelon and says so above
    its figure; choosing the data above takes the sentence away."""
    open_page(dash_duo, dash_app, _SMALL)
    note = dash_duo.find_element("#sel-rs-source-note")
    assert note.is_displayed()
    assert "This study runs on Madelon, a built-in benchmark (20 relevant features and 480 " \
           "irrelevant ones), not on your data" in note.text
    assert note.rect["y"] < dash_duo.find_element("#sel-rs-graph").rect["y"]   # above it
    dash_duo.select_dcc_dropdown("#sel-rs-rs", value="The data above")
    wait_for(lambda: not dash_duo.find_element("#sel-rs-source-note").is_displayed(),
             what="the Madelon sentence to go")
    assert dash_duo.find_element("#sel-rs-source-note").text == ""


@pytest.mark.browser
def test_bad_input_shows_a_sentence(dash_duo, dash_app):
    open_link_with_note(dash_duo, dash_app, _SMALL + "&seeds=99", "#sel-link-notes",
                        "number of seeds was ignored")
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean"), what="the RS/SRS curves")
    set_number(dash_duo, "#sel-rs-q", "9999")
    dash_duo.wait_for_contains_text("#sel-rs-error", "from 1 to 500", timeout=20)
    assert "Traceback" not in dash_duo.find_element("#sel-rs-error").text
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_an_out_of_range_value_is_a_sentence_and_nothing_runs(dash_duo, dash_app):
    open_page(dash_duo, dash_app, _SMALL)
    first = wait_for(lambda: _pvalues(dash_duo), what="the p-values")
    set_number(dash_duo, "#sel-null-trees", "5000")
    dash_duo.wait_for_contains_text(
        "#sel-null-trees-error", "Number of trees must be a whole number from 1 to 1,000",
        timeout=20)
    dash_duo.wait_for_contains_text("#sel-null-job-status", "Nothing was recomputed",
                                    timeout=10)
    assert "vi-job-running" not in dash_duo.find_element("#sel-null-job").get_attribute("class")
    assert _pvalues(dash_duo) == first                       # the figure is unchanged
    assert url_query(dash_duo).get("trees") == "10"
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_a_shared_link_reproduces_the_view(dash_duo, dash_app, page):
    open_page(dash_duo, dash_app, _SMALL)
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean"), what="the RS/SRS curves")
    set_number(dash_duo, "#sel-null-null-seed", "5")
    wait_for(lambda: "null_seed=5" in dash_duo.driver.current_url, what="the seed in the URL")
    out, settings, data = _null(page, random_state=5, n_samples=500)
    want = list(next(t for t in _draw(page.NULL_VIEW, out, settings, data)[3].data
                     if t.meta == "p-value").y)
    wait_for(lambda: _pvalues(dash_duo) == pytest.approx(want), what="the seed-5 p-values")
    curves = _traces(dash_duo, "#sel-rs-graph", "mean")
    link = dash_duo.driver.current_url

    dash_duo.driver.get("about:blank")
    dash_duo.driver.get(link)
    wait_for(lambda: _pvalues(dash_duo) == pytest.approx(want), what="the same p-values")
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean") == curves, what="the same curves")
    assert dash_duo.find_element("#sel-null-null-seed").get_attribute("value") == "5"
    assert dash_duo.get_logs() == []


def test_led_boundary_sentence_says_it_is_the_only_one():
    """LED's digits are told apart by X1..X5 alone and by no other minimal set (checked by
    brute force in the core's tests), so the page says the boundary is the only one."""
    from varimp_core.exact.relevance import relevance
    from varimp_core.plots.selection_captions import relevance_sentences
    from varimp_core.problems.registry import get_problem

    r = relevance(get_problem("led").exact_table())
    text = " ".join(relevance_sentences(r, exact=True))
    assert "A minimal Markov boundary: X1, X2, X3, X4, X5" in text
    assert "here it is the only one" in text


def test_choosing_upload_without_a_table_says_why(page):
    """"Your upload" with no table in the session: a sentence under the dropdown, and the
    views keep the data they show."""
    base = DataChoice.from_page({"problem": "led"})[0].to_store()
    store, note = page.choose_data("upload", base)
    assert store is dash.no_update
    assert note == ("No uploaded table in this session: choose a problem, or upload a CSV file "
                    "on the Data page. The page still shows the previous data.")


def test_long_lists_of_names_are_cut_in_sentences():
    from varimp_core.plots.distributions_captions import name_list

    names = [f"X{i}" for i in range(1, 15)]
    assert name_list(names) == ", ".join(names[:12]) + " and 2 more"
    assert name_list([]) == "none"


def test_rs_on_an_exact_distribution_says_how_many_rows_it_drew(page):
    """RS/SRS need rows: on an exact distribution they draw the problem's default sample
    (seed 0) first, and the sentence says so rather than leaving it unsaid."""
    out, settings, data = _rs(page, source="data", subspace_size=4, n_estimators=30)
    n = get_problem(XOR).default_samples
    texts = _draw(page.RS_VIEW, out, settings, data)[1]   # the curves' sentences
    assert f"{n:,} rows drawn from it (seed 0)" in texts[0].children


def test_the_default_rs_study_is_warmed_for_every_data(page, monkeypatch):
    """The default RS/SRS study runs on Madelon whatever the session's data, so the server's
    start computes it (issue 12: a first result within 5 s); a first visit with an upload
    reads it from the cache and grows no tree."""
    from pages._framework.view import warm_now

    assert page.WARMING is None  # the tests switch warming off (VARIMP_WARM=0)
    [(view, values, _)] = page.WARM_RUNS
    assert view is page.RS_VIEW and values == page.RSS.defaults()
    warm_now(page.WARM_RUNS)
    rng = np.random.default_rng(0)
    rows = "\n".join(f"{a:.3f},{b:.3f},{int(a > b)}" for a, b in rng.normal(size=(40, 2)))
    upload = DataChoice.from_params(upload_csv("a,b,y\n" + rows, "t.csv"))
    monkeypatch.setattr(study, "run_rs_study", lambda *a, **k: pytest.fail("trees grown"))
    settings = page.RSS.settings(values, Context(upload.n_features()))
    out = page.compute_rs(settings, upload, jobs.Progress(None))
    assert out["trees_done"] == out["trees_asked"] == 2 * values["n_estimators"]


@pytest.mark.browser
def test_an_over_limit_link_gets_its_refusal_and_no_figure_says_computing(dash_duo, dash_app):
    """Issue #26: R = 1,000 permutations of 1,000 trees are each within bounds, but
    R x T = 1,000,000 passes the null's limit of 100,000: the sentence says so, and the null's
    figures, which said "Computing\u2026", say that nothing was drawn; RS/SRS still runs."""
    open_page(dash_duo, dash_app, f"/selection?problem={XOR}&R=1000&trees=1000&T=20&q=20")
    dash_duo.wait_for_contains_text("#sel-null-error", "1,000,000 trees is more than the limit",
                                    timeout=60)
    assert "previous settings" not in dash_duo.find_element("#sel-null-error").text

    def annotations(graph):
        return dash_duo.driver.execute_script(
            "const g = document.querySelector(arguments[0] + ' .js-plotly-plot');"
            "return g && g.layout ? (g.layout.annotations || []).map(a => a.text) : [];", graph)

    for graph in ("#sel-pvalue-graph", "#sel-relevance-graph"):
        wait_for(lambda: any("Nothing drawn" in t for t in annotations(graph)), what=graph)
        assert not any("Computing" in t for t in annotations(graph))
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean"), what="the RS/SRS curves")
    assert dash_duo.get_logs() == []
