"""The Distributions page: its parameters, computing and rendering, then the page in Chromium."""

from __future__ import annotations

import csv
import io
import time
from urllib.parse import urlsplit

import dash
import numpy as np
import pytest
from _browser import (image_format, open_link_with_note, open_page, set_number, traces_by_meta,
                      url_query, wait_for)
from _pages import FORMULA_CSV
from _pages import query_dict as _query
from _pages import registered_page, store_csv, upload_csv
from _pages import page_module

from pages._framework import datasource

from pages._server import job_signals, jobs
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import data_label
from pages._framework.params import Context
from varimp_core.studies.distributions import ImportanceDistribution
from varimp_core.studies.montecarlo import monte_carlo, sweep
from varimp_core.studies.nulls import permutation_null
from varimp_core.studies.montecarlo import sweep_statistics
from varimp_core.serialize import from_jsonable

draw = page_module("distributions")

XOR = "xor:irrelevant=2"            # Sutera (2013): 2 relevant and 2 irrelevant bits


@pytest.fixture(scope="module")
def page(app_module):
    import pages.distributions as module

    return module


def _data(problem=XOR) -> DataChoice:
    return DataChoice.from_page({"problem": problem})[0]


def _controls(**kw) -> dict:
    return {**dict(mode="samples", n_replicates=20, n_samples=200, n_estimators=5,
                   max_features=1, max_depth=None, random_state=0, method="forest",
                   view="histogram"), **kw}


class _Stop(jobs.Progress):
    """A job's progress whose Cancel is asked after ``after`` looks (None: never), or at its
    first progress report (``at_report``)."""

    def __init__(self, after=None, at_report=False):
        super().__init__(None)
        self.after, self.looks, self.at_report, self.reported = after, 0, at_report, False

    def __call__(self, *args, **kw):
        self.reported = True
        super().__call__(*args, **kw)

    def should_stop(self) -> bool:
        self.looks += 1
        return (self.after is not None and self.looks > self.after) or \
            (self.at_report and self.reported)


def _run(page, problem=XOR, progress=None, data=None, **kw):
    """The run view's result (cached, else computed), its settings and data."""
    data = data or _data(problem)
    store = data.to_store()
    return page.VIEW.run(_controls(**kw), store, {"data_store": store}, progress or _Stop())


def _sweep(page, parameter, values, problem=XOR, progress=None, **kw):
    data = _data(problem)
    store = data.to_store()
    extra = {"data_store": store, **{n: v for n, v in _controls(**kw).items() if n != "view"}}
    return page.SWEEP_VIEW.run({"parameter": parameter, "values": values}, store, extra,
                               progress or _Stop())


# -- parameters and URL -----------------------------------------------------------------
def test_default_state_is_small_and_uses_the_session_default(page):
    run, sweep_, notes, _ = page.initial_values({}, DataChoice.from_page({})[0])
    assert notes == []
    assert (DataChoice.from_page({})[0]["problem"], run["mode"], run["n_replicates"],
            run["n_samples"], run["n_estimators"], run["max_features"], run["method"]) == \
        ("led", "samples", 100, 500, 50, 1, "forest")
    assert (sweep_["parameter"], sweep_["values"]) == ("n_estimators", "1,10,50")


def test_the_session_data_is_the_default_and_an_upload_means_bootstrap(page):
    vi_data = {"params": {"source": "problem", "problem": XOR}}
    assert DataChoice.from_page({}, vi_data)[0]["problem"] == XOR
    rows = "\n".join(f"{i % 3},{i % 2},{(i + i // 3) % 2}" for i in range(60))
    info = store_csv("a,b,y\n" + rows, "t.csv")
    up = {"params": {"source": "upload", "upload": info["key"], "file": "t.csv", "target": "y"}}
    data = DataChoice.from_page({}, up)[0]
    run, _, _, _ = page.initial_values({}, data)
    assert (run["mode"], run["n_samples"]) == ("bootstrap", None)
    assert [o["value"] for o in page.studies.problem_options(data)][0] == "upload"
    assert next(o for o in draw.mode_options(data) if o["value"] == "samples")["disabled"]


def test_link_state_round_trips_through_the_url(page):
    query = {"problem": "sym:irrelevant=2", "R": "30", "N": "250", "T": "7", "K": "2",
             "depth": "3", "method": "sklearn-et", "mc_seed": "9", "view": "violin",
             "sweep": "n_samples", "values": "400, 100,100"}
    data = _data("sym:irrelevant=2")
    run, sweep_, notes, _ = page.initial_values(query, data)
    assert notes == []
    assert sweep_["values"] == "100,400"                       # sorted, no duplicates
    ctx = Context(p=4)
    link = "&".join([data.query(), page.RUN.query(page.RUN.settings(run, ctx)),
                     page.SWEEPS.query(page.SWEEPS.settings(sweep_, ctx))])
    again = _query(link)
    data_again, _ = DataChoice.from_page(again)
    assert data_again == data
    assert page.initial_values(again, data_again)[:3] == (run, sweep_, [])
    assert again["view"] == "violin" and again["mc_seed"] == "9" and again["values"] == "100,400"


@pytest.mark.parametrize("query,words", [
    ({"problem": XOR, "R": "999999"}, "number of replicates R"),
    ({"problem": "iris", "mode": "samples"}, "replicate kind was ignored"),
    ({"problem": XOR, "K": "9"}, "K must be a whole number from 1 to 4"),
    ({"problem": XOR, "values": "1,x"}, "not a number"),
    ({"problem": "iris", "sweep": "noise"}, "swept parameter was ignored"),
    ({"problem": XOR, "method": "boosting"}, "Method"),
])
def test_bad_links_fall_back_with_a_sentence(page, query, words):
    _, _, notes, _ = page.initial_values(query, _data(query["problem"]))
    assert len(notes) == 1 and words in notes[0], notes
    assert "Traceback" not in notes[0]


@pytest.mark.parametrize("change,words", [
    (dict(n_replicates=0), "Number of replicates R must be a whole number from 1 to 2,000"),
    (dict(n_replicates=None), "Enter number of replicates R"),
    (dict(n_estimators=2.5), "Number of trees T must be a whole number"),
    (dict(max_features=5), "from 1 to 4"),
    (dict(n_samples=-3), "Sample size N"),
    (dict(max_depth=0), "Maximum depth"),
    (dict(method="gbm"), "Method must be one of"),
    (dict(mode="sideways"), "Replicate kind must be one of"),
])
def test_out_of_range_controls_are_sentences_and_nothing_runs(page, change, words):
    settings, errors = page.RUN.validate(_controls(**change), Context(p=4))
    assert settings == {} and len(errors) == 1
    (sentence,) = errors.values()
    assert words in sentence and sentence.endswith(".")


@pytest.mark.parametrize("problem,change,words", [
    ("iris", dict(), "Fresh samples need a built-in problem"),
    (XOR, dict(n_replicates=2000, n_estimators=1000), "more than the limit of 500,000"),
    (XOR, dict(n_samples=None), "Enter the sample size N"),
])
def test_settings_that_cannot_run_together_are_sentences(page, problem, change, words):
    with pytest.raises(ValueError, match=words):
        _run(page, problem, **change)


def test_the_header_names_the_data(page):
    header = next(c for c in page.layout(problem=XOR).children
                  if getattr(c, "className", None) == "vi-dataset")
    assert header.children[1].id == "dist-dataset"
    assert header.children[1].children == "xor:irrelevant=2 (exact, 4 inputs)"


def test_upload_choice_needs_an_uploaded_table(page):
    with pytest.raises(ValueError, match="No uploaded table"):
        page.studies.choose_data("upload", _data())


def test_caps_come_from_the_environment(page, monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_REPLICATES", "50")
    monkeypatch.setenv("VARIMP_MAX_SWEEP_VALUES", "2")
    assert "R \u2264 50" in draw.caps_text() and "2 sweep values" in draw.caps_text()
    _, errors = page.RUN.validate(_controls(n_replicates=60), Context(p=4))
    assert "from 1 to 50" in errors["n_replicates"]
    with pytest.raises(ValueError, match="at most 2 values"):
        draw.parse_values("1,2,3", "n_estimators")


def test_parse_values_and_sweep_settings(page):
    assert draw.parse_values(" 50; 10 1,10", "n_estimators") == [1, 10, 50]
    assert draw.parse_values("0, 0.25", "noise") == [0.0, 0.25]
    for text, parameter, words in [("", "n_estimators", "Enter the values"),
                                   ("0", "n_estimators", "whole numbers from 1"),
                                   ("1.5", "irrelevant", "whole numbers"),
                                   ("5", "max_features", "from 1 to 4"),
                                   ("1.2", "noise", "probabilities")]:
        with pytest.raises(ValueError, match=words):
            draw.parse_values(text, parameter, p=4)
    assert _sweep(page, "none", "")[0]["parameter"] is None
    with pytest.raises(ValueError, match="permutation"):
        _sweep(page, "n_estimators", "1,2", mode="permutation")
    with pytest.raises(ValueError, match="limit"):
        _sweep(page, "n_samples", "10,20,30", n_replicates=2000, n_estimators=100)
    with pytest.raises(ValueError, match="from 1 to 4"):
        _sweep(page, "max_features", "1,5")


def test_problem_controls_follow_the_problem(page):
    base = _data("led").to_store()
    store, _, modes, mode, _, placeholder, sweeps, parameter = page.choose_data(
        "iris", base, "samples", "noise")
    assert mode == "bootstrap" and store["p"] == 4 and placeholder == "all rows"
    assert data_label(store) == "iris (N = 150, 4 inputs)"    # the header
    assert next(o for o in sweeps if o["value"] == "noise")["disabled"] and parameter == "none"
    store, _, _, mode, _, _, _, _ = page.choose_data(XOR, base, "samples", "n_estimators")
    assert mode == "samples" and store["params"]["problem"] == XOR
    # K beyond the chosen problem's inputs is a sentence beside K, not a silent K = 1
    _, errors = page.RUN.validate(_controls(max_features=7), Context(p=store["p"]))
    assert "K must be a whole number from 1 to 4" in errors["max_features"]


# -- computing ---------------------------------------------------------------------
def test_the_run_is_the_core_monte_carlo_and_is_cached(page):
    out, _, _ = _run(page, n_replicates=12, n_estimators=4, n_samples=150, random_state=5)
    direct = monte_carlo(XOR, n_replicates=12, n_samples=150, n_estimators=4, random_state=5)
    result = ImportanceDistribution.from_dict(out).result
    np.testing.assert_array_equal(result.replicates, direct.replicates)
    np.testing.assert_array_equal(result.exact, direct.exact)
    assert out["partial"] is False
    calls = []
    again, _, _ = _run(page, progress=lambda *a: calls.append(a), n_replicates=12,
                       n_estimators=4, n_samples=150, random_state=5, view="violin")
    assert calls == [] and again == out    # another drawing: read back, not recomputed


def test_results_round_trip_through_json_exactly(page):
    r = monte_carlo(XOR, n_replicates=4, n_samples=100, n_estimators=3, method="sklearn-et")
    out, _, _ = _run(page, n_replicates=4, n_samples=100, n_estimators=3, method="sklearn-et")
    back = ImportanceDistribution.from_dict(out).result
    np.testing.assert_array_equal(back.replicates, r.replicates)
    assert np.isnan(back.information).all() and back.relevant == r.relevant
    assert back.parameters == r.parameters


def test_cancel_keeps_the_finished_replicates_and_caches_nothing(page):
    kw = dict(n_replicates=40, n_estimators=3, n_samples=100, random_state=11)
    out, settings, data = _run(page, progress=_Stop(after=3), **kw)   # 3 chunks, then Cancel
    result = ImportanceDistribution.from_dict(out).result
    assert out["partial"] and result.cancelled and 0 < result.n_replicates < 40
    assert page.VIEW.cached(data, settings, {"data_store": data.to_store()}) is None
    full, _, _ = _run(page, **kw)
    whole = ImportanceDistribution.from_dict(full).result
    np.testing.assert_array_equal(whole.replicates[:result.n_replicates],
                                  result.replicates)   # the same seeds: a prefix of the full run


def test_cancel_button_flag_stops_a_run_and_the_page_shows_the_partial_result(page):
    instance = "a" * 32

    class Cancelled(jobs.Progress):
        def __call__(self, *args, **kw):
            job_signals.request_stop(instance, "dist")    # what the Cancel button's callback does
            super().__call__(*args, **kw)

    progress = Cancelled(None, stop=(instance, "dist"))
    # Progress looks at the flag at most every 0.25 s: a run of several seconds
    out, settings, data = _run(page, progress=progress, n_replicates=1000, n_estimators=20,
                               n_samples=500, random_state=12)
    done = ImportanceDistribution.from_dict(out).result.n_replicates
    assert out["partial"] and 0 < done < 1000
    shown = draw.render(out, settings, data)
    assert shown[6] == f"Partial result: cancelled after {done:,} of 1,000 replicates."
    hist = [t for t in shown[0].data if t.meta == "replicates"]
    assert len(hist[0].x) == done
    job_signals.clear_stop(instance, "dist")          # a new job clears the flag
    assert not job_signals.stop_requested(instance, "dist")


def test_render_shows_the_core_numbers(page):
    out, settings, data = _run(page, n_replicates=15, n_estimators=4, n_samples=200,
                               random_state=2)
    figure, _, rows, _, fit_rows, summary, note, _ = page.VIEW.draw(
        out, settings, data, {"data_store": data.to_store()})   # what the job draws
    result = ImportanceDistribution.from_dict(out).result
    for j, t in enumerate(t for t in figure.data if t.meta == "replicates"):
        np.testing.assert_array_equal(np.asarray(t.x), result.replicates[:, j])
    rows = {r["variable"]: r for r in rows}
    assert rows["X1"]["mean"] == result.mean[0] and rows["X1"]["exact"] == 0.5
    assert rows["X3"]["relevance"] == "irrelevant"
    laws = [(r["Variable"], r["Law"]) for r in fit_rows]
    assert laws[:2] == [("X1", "scaled \u03c7\u00b2"), ("X1", "normal")] and len(laws) == 8
    text = " ".join(p.children for p in summary)
    assert "15 data sets" in text and "plug-in" in text and note == ""
    violins = draw.render(out, {**settings, "view": "violin"}, data)[0]
    assert {t.type for t in violins.data if t.meta == "replicates"} == {"violin"}


def test_permutation_mode_on_a_real_dataset(page):
    out, settings, data = _run(page, "iris", mode="permutation", n_replicates=10,
                               n_estimators=3, random_state=1)
    assert out["n_samples"] is None
    result = ImportanceDistribution.from_dict(out).result
    direct = permutation_null(datasource.load_prepared(data.as_dict), n_permutations=10,
                              n_estimators=3, random_state=1)
    np.testing.assert_array_equal(result.null, direct.null)
    np.testing.assert_array_equal(result.observed, direct.observed)
    _, columns, _, _, _, summary, _, _ = draw.render(out, settings, data)
    assert columns[1]["field"] == "observed"
    assert "permutations of the target of iris" in summary[0].children


def test_bootstrap_of_a_real_dataset_with_scikit_learn(page):
    out, settings, data = _run(page, "iris", mode="bootstrap", n_replicates=5, n_samples=None,
                               n_estimators=2, method="sklearn-rf")
    assert out["n_samples"] is None                # blank N: bootstrap samples of 150 rows
    text = " ".join(p.children for p in draw.render(out, settings, data)[5])
    assert "bootstrap replicates of iris" in text and "value on the full sample" in text
    result = ImportanceDistribution.from_dict(out).result
    assert result.parameters["n_samples"] == 150 and result.relevant is None


def test_bootstrap_of_an_exact_problem_draws_one_sample_first(page):
    out, _, _ = _run(page, mode="bootstrap", n_replicates=6, n_estimators=3, n_samples=300,
                     random_state=4)
    result = ImportanceDistribution.from_dict(out).result
    assert result.exact_source == "full sample" and result.relevant == ("X1", "X2")
    assert result.parameters["replicates_from"] == "bootstrap"


def test_sweep_runs_renders_and_stops(page):
    out, _, _ = _sweep(page, "n_estimators", "1, 4", n_replicates=10, n_estimators=3,
                       n_samples=150)
    figure, note = draw.render_sweep(out)
    means = [t for t in figure.data if t.meta == "mean"]
    assert [list(t.x) for t in means][0] == [1, 4]
    assert "1/\u221aT" in note

    kw = dict(n_replicates=30, n_estimators=2, n_samples=150)
    out, settings, data = _sweep(page, "n_samples", "100, 200, 300", progress=_Stop(at_report=True),
                                 **kw)
    assert out["partial"] and set(from_jsonable(out["stats"])["value"]) == {100}
    extra = {"data_store": data.to_store(), **{n: v for n, v in _controls(**kw).items()
                                               if n != "view"}}
    assert page.SWEEP_VIEW.cached(data, settings, extra) is None
    assert draw.render_sweep(out)[1].startswith("Partial result")


def test_many_inputs_are_capped_with_a_sentence(page):
    out, settings, data = _run(page, "xor:irrelevant=62", n_replicates=4, n_samples=60,
                               n_estimators=1)
    figure, _, rows, _, fit_rows, summary, _, _ = draw.render(out, settings, data)
    assert len(rows) == 64
    assert {r["Variable"] for r in fit_rows} == {f"X{j}" for j in range(1, 61)}
    assert len([t for t in figure.data if t.meta == "replicates"]) == 16
    assert "first 60 of the 64 variables" in summary[-1].children


def test_a_run_cancelled_before_any_replicate_is_a_sentence(page):
    out, settings, data = _run(page, progress=_Stop(after=0), n_replicates=50,
                               n_estimators=3, n_samples=100, random_state=13)
    assert out["partial"] and ImportanceDistribution.from_dict(out).result.n_replicates == 0
    with pytest.raises(ValueError, match="Cancelled before any replicate finished"):
        draw.render(out, settings, data)


def test_csv_exports_are_safe_to_open(page):
    data = DataChoice.from_params(upload_csv(FORMULA_CSV, "evil.csv"))
    out, _, _ = _run(page, data=data, mode="bootstrap", n_replicates=5, n_samples=None,
                     n_estimators=2)
    summary = list(csv.reader(io.StringIO(draw.csv_text("summary", out))))
    assert [r[0] for r in summary[1:]] == ["'=cmd|' /C calc'!A0", "'@x"]
    reps = list(csv.reader(io.StringIO(draw.csv_text("replicates", out))))
    assert reps[0] == ["replicate", "variable", "importance", "exact"] and len(reps) == 11
    assert float(reps[1][2]) == ImportanceDistribution.from_dict(out).result.replicates[0, 0]
    assert page.make_csv("summary")(out, None, data)[1] == \
        "varimp-distributions-evil-bootstrap-summary.csv"
    with pytest.raises(ValueError, match="no sweep"):
        draw.csv_text("sweep", {"parameter": None})


def test_page_is_registered(dash_app):
    page = registered_page("pages.distributions")
    assert (page["path"], page["name"], page["order"]) == ("/distributions", "Distributions", 7)


# -- in the browser ------------------------------------------------------------------
_SMALL = f"/distributions?problem={XOR}&R=20&T=10&N=200"


def _traces(dash_duo, meta="replicates", graph="#dist-graph"):
    return traces_by_meta(dash_duo, graph, meta)


def _histograms(dash_duo, n):
    return wait_for(lambda: (lambda t: t if len(t) == 4 and len(t[0][1]) == n else None)(
        _traces(dash_duo)), what=f"histograms of {n} replicates")


@pytest.mark.browser
def test_page_loads_and_a_small_job_updates_the_figure(dash_duo, dash_app):
    open_page(dash_duo, dash_app, _SMALL + "&sweep=none")
    first = _histograms(dash_duo, 20)
    exact = _traces(dash_duo, "exact")
    assert [e[1][0] for e in exact] == pytest.approx([0.5, 0.5, 0.0, 0.0], abs=1e-12)  # Eqn 3
    dash_duo.wait_for_contains_text("#dist-job-status", "Done", timeout=10)
    dash_duo.wait_for_contains_text("#dist-summary", "20 data sets", timeout=10)
    assert dash_duo.find_element("#dist-table").text.count("irrelevant") == 2
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#dist-r", "30")
    after = _histograms(dash_duo, 30)
    # replicate r is seeded by child r of the seed: the first 20 of 30 are the 20 shown before
    assert after[0][1][:20] == first[0][1]
    wait_for(lambda: url_query(dash_duo).get("R") == "30", what="R=30 in the address bar")
    assert image_format(dash_duo, "#dist-graph") == "png"
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_cancel_stops_the_run_and_shows_the_partial_result(dash_duo, dash_app):
    open_page(dash_duo, dash_app, f"/distributions?problem={XOR}&R=2000&T=200&N=200&sweep=none")
    wait_for(lambda: "of 2,000 replicates" in dash_duo.find_element("#dist-job-message").text,
             what="the progress of the long run")
    assert dash_duo.find_element("#dist-fieldset").get_attribute("disabled") == "true"
    dash_duo.find_element("#dist-job-cancel").click()
    dash_duo.wait_for_contains_text("#dist-job-status", "Cancelled", timeout=30)
    dash_duo.wait_for_contains_text("#dist-partial", "Partial result: cancelled after",
                                    timeout=10)
    done = len(wait_for(lambda: _traces(dash_duo), what="the partial histograms")[0][1])
    assert 0 < done < 2000
    wait_for(lambda: dash_duo.find_element("#dist-fieldset").get_attribute("disabled") is None,
             what="the controls to come back")
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_leaving_the_page_mid_job_logs_no_error(dash_duo, dash_app):
    """Leaving Distributions while both its views stream (issue 26): the jobs' progress,
    streamed results and re-enabled controls reach a page that is gone, and the browser's
    console stays free of "ID running component not found in layout"."""
    open_page(dash_duo, dash_app, f"/distributions?problem={XOR}&R=2000&T=200&N=200"
                                  "&sweep=n_estimators&values=1,2,3")
    wait_for(lambda: "of 2,000 replicates" in dash_duo.find_element("#dist-job-message").text,
             what="the progress of the long run")
    dash_duo.find_element("a.vi-nav-link[href^='/importances']").click()
    wait_for(lambda: dash_duo.driver.find_elements("css selector", "#imp-graph .js-plotly-plot"),
             what="the Importances page")
    time.sleep(6)  # the polls of the left jobs come back (every 0.5 s) and are answered
    assert not dash_duo.driver.find_elements("css selector", "#dist-graph")
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_bad_input_shows_a_sentence(dash_duo, dash_app):
    open_link_with_note(dash_duo, dash_app, _SMALL + "&sweep=none&T=9999", "#dist-link-notes",
                        "number of trees T was ignored")
    _histograms(dash_duo, 20)
    set_number(dash_duo, "#dist-k", "9")
    dash_duo.wait_for_contains_text("#dist-k-error", "K must be a whole number from 1 to 4",
                                    timeout=20)
    assert "Traceback" not in dash_duo.find_element("#dist-k-error").text
    wait_for(lambda: dash_duo.find_element("#dist-sweep-fieldset").get_attribute("disabled")
             is None, what="the sweep controls")
    dash_duo.select_dcc_dropdown("#dist-sweep-sweep", value="N (samples per data set)")
    set_number(dash_duo, "#dist-k", "1")
    wait_for(lambda: "N (samples" in dash_duo.find_element("#dist-sweep-sweep").text
             and dash_duo.find_element("#dist-sweep-fieldset").get_attribute("disabled") is None
             and dash_duo.find_element("#dist-sweep-values").get_attribute("value")
             == "50,200,1000", what="the sweep controls")
    wait_for(lambda: len(_traces(dash_duo, "mean", "#dist-sweep-graph")) == 4
             and "Done" in dash_duo.find_element("#dist-sweep-job-status").text,
             what="the default N sweep")
    set_number(dash_duo, "#dist-sweep-values", "50, lots")
    dash_duo.wait_for_contains_text("#dist-sweep-error", "'lots' is not a number", timeout=20)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_an_out_of_range_value_is_a_sentence_and_nothing_runs(dash_duo, dash_app):
    open_page(dash_duo, dash_app, _SMALL + "&sweep=none")
    first = _histograms(dash_duo, 20)
    set_number(dash_duo, "#dist-r", "999999")
    dash_duo.wait_for_contains_text(
        "#dist-r-error", "Number of replicates R must be a whole number from 1 to 2,000",
        timeout=20)
    dash_duo.wait_for_contains_text("#dist-job-status", "Nothing was recomputed", timeout=10)
    assert "vi-job-running" not in dash_duo.find_element("#dist-job").get_attribute("class")
    assert _traces(dash_duo) == first                    # the figure is unchanged
    assert url_query(dash_duo).get("R") == "20"
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_a_shared_link_reproduces_the_view(dash_duo, dash_app):
    sym = "sym:irrelevant=2"
    expected = monte_carlo(sym, n_replicates=20, n_samples=200, n_estimators=10,
                           random_state=7).replicates
    stats = sweep_statistics(sweep(sym, "n_samples", [50, 200], n_replicates=20,
                                   n_estimators=10, random_state=7, replicates=True))
    means = [stats[stats.variable == v].sort_values("value")["mean"].tolist()
             for v in ("X1", "X2", "X3", "X4")]

    def shows_the_link_view():
        violins, sweep_means = _traces(dash_duo), _traces(dash_duo, "mean", "#dist-sweep-graph")
        return (len(violins) == 4 and len(sweep_means) == 4
                and all(np.array_equal(t[2], expected[:, j]) for j, t in enumerate(violins))
                and all(np.allclose(t[2], m, rtol=1e-12, atol=0)
                        for t, m in zip(sweep_means, means)))

    open_page(dash_duo, dash_app, _SMALL.replace(XOR, sym)
              + "&view=violin&sweep=n_samples&values=50,200")
    wait_for(lambda: len(_traces(dash_duo)) == 4, what="the violins")
    set_number(dash_duo, "#dist-mc-seed", "7")
    wait_for(lambda: "mc_seed=7" in dash_duo.driver.current_url, what="the seed in the URL")
    wait_for(shows_the_link_view, what="the view of seed 7")
    link = dash_duo.driver.current_url
    assert _query(urlsplit(link).query)["view"] == "violin"

    dash_duo.driver.get("about:blank")
    dash_duo.driver.get(link)
    wait_for(shows_the_link_view, what="the same view from the link")
    assert dash_duo.find_element("#dist-mc-seed").get_attribute("value") == "7"
    assert dash_duo.find_element("#dist-sweep-values").get_attribute("value") == "50,200"
    assert dash_duo.get_logs() == []


def test_fresh_samples_fan_out_through_the_mapper(page, monkeypatch, tmp_path):
    # With REDIS_URL set, fanout.replicate_mapper() returns a Celery mapper; here a
    # mapper that runs the chunks itself (in reverse order) stands in for the workers.
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    seen = []

    def mapper(job, chunks):
        seen.append(len(chunks))
        return ((i, [job(s) for s in chunk]) for i, chunk in reversed(list(enumerate(chunks))))

    monkeypatch.setattr(page.fanout, "replicate_mapper", lambda: mapper)
    out, _, _ = _run(page, n_replicates=12, n_estimators=4, n_samples=150, random_state=9)
    direct = monte_carlo(XOR, n_replicates=12, n_samples=150, n_estimators=4, random_state=9)
    assert seen and seen[0] >= 2
    np.testing.assert_array_equal(ImportanceDistribution.from_dict(out).result.replicates,
                                  direct.replicates)   # same numbers, whoever computes them


def test_choosing_upload_without_a_table_says_why(page):
    """"Your upload" with no table in the session: a sentence under the problem dropdown,
    and every other output (the data the views run on) stays."""
    base = DataChoice.from_page({"problem": "led"})[0].to_store()
    out = page.choose_data("upload", base, "samples", "none")
    assert out[1] == ("No uploaded table in this session: choose a problem, or upload a CSV "
                      "file on the Data page. The page still shows the previous data.")
    assert all(v is dash.no_update for i, v in enumerate(out) if i != 1)


def _annotations(dash_duo, graph: str) -> list[str]:
    return dash_duo.driver.execute_script(
        "const g = document.querySelector(arguments[0] + ' .js-plotly-plot');"
        "return g && g.layout ? (g.layout.annotations || []).map(a => a.text) : [];", graph)


@pytest.mark.browser
def test_an_over_limit_link_gets_its_refusal_and_no_figure_says_computing(dash_duo, dash_app):
    """Issue #26: R = 2,000 and T = 1,000 are each within their bounds, but 2,000,000 trees
    pass the run's limit of 500,000: the refusal is a sentence, and the figure that said
    "Computing\u2026" says nothing was drawn (there are no previous settings to show)."""
    open_page(dash_duo, dash_app, f"/distributions?problem={XOR}&R=2000&T=1000&N=200&sweep=none")
    dash_duo.wait_for_contains_text("#dist-error", "2,000,000 trees, more than the limit",
                                    timeout=60)
    error = dash_duo.find_element("#dist-error").text
    assert "previous settings" not in error
    wait_for(lambda: any("Nothing drawn" in t for t in _annotations(dash_duo, "#dist-graph")),
             what="the figure's sentence")
    assert not any("Computing" in t for t in _annotations(dash_duo, "#dist-graph"))
    assert "vi-job-running" not in dash_duo.find_element("#dist-job").get_attribute("class")
    # A value within the limit then draws the figure (R x T = 20,000 trees).
    set_number(dash_duo, "#dist-r", "20")
    _histograms(dash_duo, 20)
    assert dash_duo.get_logs() == []
