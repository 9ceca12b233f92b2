"""The Distributions page: its callback logic as plain functions, then the page in Chromium."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlsplit

import numpy as np
import pytest
from _browser import (image_format, open_link_with_note, open_page, set_number, traces_by_meta,
                      url_query, wait_for)
from _pages import FORMULA_CSV
from _pages import query_dict as _query
from _pages import problem_settings, registered_page, store_csv, upload_csv

from pages._ui import cache, datasource
from pages._ui import distributions_logic as logic
from varimp_core.studies.montecarlo import monte_carlo, sweep
from varimp_core.studies.nulls import permutation_null
from varimp_core.studies.montecarlo import sweep_statistics

XOR = "xor:irrelevant=2"            # Sutera (2013): 2 relevant and 2 irrelevant bits


def _settings(problem=XOR, **kw):
    controls = dict(mode="samples", R=20, N=200, T=5, K=1, depth=None, method="forest",
                    mc_seed=0)
    return problem_settings(logic, logic.settings_from_controls, problem, **{**controls, **kw})


# -- state and URL --------------------------------------------------------------------
def test_default_state_is_small_and_uses_the_session_default():
    s = logic.initial_state({})
    v = s["values"]
    assert s["notes"] == []
    assert (v["problem"], v["mode"], v["R"], v["N"], v["T"], v["K"], v["method"]) == \
        ("led", "samples", 100, 500, 50, 1, "forest")
    assert (v["sweep"], v["values"]) == ("n_estimators", "1,10,50")
    assert "R=" not in s["query"] and "N=" not in s["query"]      # defaults stay out of links


def test_the_session_data_is_the_default_and_an_upload_means_bootstrap():
    vi_data = {"params": {"source": "problem", "problem": XOR}}
    assert logic.initial_state({}, vi_data)["values"]["problem"] == XOR
    rows = "\n".join(f"{i % 3},{i % 2},{(i + i // 3) % 2}" for i in range(60))
    info = store_csv("a,b,y\n" + rows, "t.csv")
    up = {"params": {"source": "upload", "upload": info["key"], "file": "t.csv", "target": "y"}}
    s = logic.initial_state({}, up)
    assert (s["values"]["problem"], s["values"]["mode"], s["values"]["N"]) == \
        ("upload", "bootstrap", None)
    assert [o["value"] for o in logic.problem_options(s["data"])][0] == "upload"
    assert next(o for o in logic.mode_options(s["data"]) if o["value"] == "samples")["disabled"]


def test_link_state_round_trips_through_the_url():
    query = {"problem": "sym:irrelevant=2", "R": "30", "N": "250", "T": "7", "K": "2",
             "depth": "3", "method": "sklearn-et", "mc_seed": "9", "view": "violin",
             "sweep": "n_samples", "values": "400, 100,100"}
    s = logic.initial_state(query)
    assert s["notes"] == []
    assert s["values"]["values"] == "100,400"                       # sorted, no duplicates
    again = logic.initial_state(_query(s["query"]))
    assert again["notes"] == [] and again["values"] == s["values"]
    v = s["values"]
    settings = logic.settings_from_controls(
        problem=v["problem"], data=s["data"], mode=v["mode"], R=v["R"], N=v["N"], T=v["T"],
        K=v["K"], depth=v["depth"], method=v["method"], mc_seed=v["mc_seed"])
    assert logic.page_query(settings, view="violin", sweep_param="n_samples",
                            values_text="100,400") == s["query"]


@pytest.mark.parametrize("query,words", [
    ({"problem": XOR, "R": "999999"}, "number of replicates R"),
    ({"problem": "iris", "mode": "samples"}, "no generator"),
    ({"problem": XOR, "K": "9"}, "K must be from 1 to 4"),
    ({"problem": XOR, "values": "1,x"}, "not a number"),
    ({"problem": "iris", "sweep": "noise"}, "sweep of output noise was ignored"),
    ({"problem": XOR, "method": "boosting"}, "method"),
])
def test_bad_links_fall_back_with_a_sentence(query, words):
    s = logic.initial_state(query)
    assert len(s["notes"]) == 1 and words in s["notes"][0], s["notes"]
    assert "Traceback" not in s["notes"][0]


@pytest.mark.parametrize("change,words", [
    (dict(R=0), "number of replicates R must be a whole number from 1 to 2,000"),
    (dict(R=None), "Enter the number of replicates"),
    (dict(T=2.5), "number of trees T must be a whole number"),
    (dict(K=5), "from 1 to 4"),
    (dict(N=-3), "sample size N"),
    (dict(depth=0), "maximum depth"),
    (dict(method="gbm"), "Choose a method"),
    (dict(mode="sideways"), "how the replicates are made"),
    (dict(problem="iris"), "Fresh samples need a built-in problem"),
    (dict(problem="upload"), "No uploaded table"),
    (dict(R=2000, T=1000), "more than the limit of 500,000"),
])
def test_bad_controls_are_sentences(change, words):
    with pytest.raises(ValueError, match=words) as err:
        _settings(**change)
    assert str(err.value).endswith(".")


def test_caps_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_REPLICATES", "50")
    monkeypatch.setenv("VARIMP_MAX_SWEEP_VALUES", "2")
    assert "R \u2264 50" in logic.caps_text() and "2 sweep values" in logic.caps_text()
    with pytest.raises(ValueError, match="from 1 to 50"):
        _settings(R=60)
    with pytest.raises(ValueError, match="at most 2 values"):
        logic.parse_values("1,2,3", "n_estimators")


def test_parse_values_and_sweep_settings():
    assert logic.parse_values(" 50; 10 1,10", "n_estimators") == [1, 10, 50]
    assert logic.parse_values("0, 0.25", "noise") == [0.0, 0.25]
    for text, parameter, words in [("", "n_estimators", "Enter the values"),
                                   ("0", "n_estimators", "whole numbers from 1"),
                                   ("1.5", "irrelevant", "whole numbers"),
                                   ("5", "max_features", "from 1 to 4"),
                                   ("1.2", "noise", "probabilities")]:
        with pytest.raises(ValueError, match=words):
            logic.parse_values(text, parameter, p=4)
    s = _settings()
    assert logic.sweep_settings(s, "none", "") is None
    spec = logic.sweep_settings(s, "max_features", "1,2")
    assert spec["values"] == [1, 2] and spec["run"] == s
    with pytest.raises(ValueError, match="permutation"):
        logic.sweep_settings(_settings(mode="permutation"), "n_estimators", "1,2")
    with pytest.raises(ValueError, match="limit"):
        logic.sweep_settings(_settings(R=2000, T=100), "n_samples", "10,20,30")


def test_problem_controls_follow_the_problem():
    data = logic.initial_state({})["data"]
    form = logic.problem_controls("iris", data, "samples", 3)
    assert form["mode"] == "bootstrap" and form["k_max"] == 4 and form["k"] == 3
    assert form["n_placeholder"] == "all rows"
    noise = next(o for o in form["sweep_options"] if o["value"] == "noise")
    assert noise["disabled"]
    form = logic.problem_controls(XOR, data, "samples", 7)
    assert form["k"] == 1 and form["mode"] == "samples"


# -- computing ---------------------------------------------------------------------
def test_compute_view_is_the_core_monte_carlo_and_is_cached():
    s = _settings(R=12, T=4, N=150, mc_seed=5)
    view = logic.compute_view(s)
    direct = monte_carlo(XOR, n_replicates=12, n_samples=150, n_estimators=4, random_state=5)
    result = logic.result_from_dict(view["result"])
    np.testing.assert_array_equal(result.replicates, direct.replicates)
    np.testing.assert_array_equal(result.exact, direct.exact)
    assert view["partial"] is False
    calls = []
    again = logic.compute_view(s, progress=lambda *a: calls.append(a))
    assert calls == [] and again == view                        # read back, not recomputed


def test_results_round_trip_through_json_exactly():
    r = monte_carlo(XOR, n_replicates=4, n_samples=100, n_estimators=3, method="sklearn-et")
    back = logic.result_from_dict(logic.result_to_dict(r))
    np.testing.assert_array_equal(back.replicates, r.replicates)
    assert np.isnan(back.information).all() and back.relevant == r.relevant
    assert back.parameters == r.parameters


def test_cancel_keeps_the_finished_replicates_and_caches_nothing():
    s = _settings(R=40, T=3, N=100, mc_seed=11)
    asked = []

    def stop():
        asked.append(1)
        return len(asked) > 3                 # three chunks, then Cancel

    view = logic.compute_view(s, should_stop=stop)
    result = logic.result_from_dict(view["result"])
    assert view["partial"] and result.cancelled and 0 < result.n_replicates < 40
    assert cache.get_json(logic.run_key(s)) is None
    full = logic.compute_view(s)
    np.testing.assert_array_equal(
        logic.result_from_dict(full["result"]).replicates[:result.n_replicates],
        result.replicates)                     # the same seeds: a prefix of the full run


def test_cancel_button_flag_stops_a_run_and_the_page_shows_the_partial_result():
    s = _settings(R=60, T=3, N=100, mc_seed=12)
    instance = "a" * 32

    def progress(done, total, text=""):
        logic.request_stop(instance, "run")    # what the Cancel button's callback does

    out = logic.run_monte_carlo(s, instance=instance, progress=progress)
    current = out["current"]
    assert current["partial"] and current["done"] < 60
    assert out["status"].startswith(f"Cancelled after {current['done']:,} of 60 replicates")
    shown = logic.render(current)
    assert shown["partial_note"].startswith("Partial result")
    hist = [t for t in shown["figure"].data if t.meta == "replicates"]
    assert len(hist[0].x) == current["done"]
    # a new run clears the flag
    assert logic.run_monte_carlo(s, instance=instance)["current"]["partial"] is False
    assert not logic.stop_requested(instance, "run")


def test_render_shows_the_core_numbers():
    s = _settings(R=15, T=4, N=200, mc_seed=2)
    out = logic.run_monte_carlo(s, instance="b" * 32)
    shown = logic.render(out["current"])
    result = logic.result_from_dict(cache.get_json(out["current"]["key"])["result"])
    for j, t in enumerate(t for t in shown["figure"].data if t.meta == "replicates"):
        np.testing.assert_array_equal(np.asarray(t.x), result.replicates[:, j])
    rows = {r["variable"]: r for r in shown["table_rows"]}
    assert rows["X1"]["mean"] == result.mean[0] and rows["X1"]["exact"] == 0.5
    assert rows["X3"]["relevance"] == "irrelevant"
    laws = [(r["variable"], r["law"]) for r in shown["fit_rows"]]
    assert laws[:2] == [("X1", "scaled \u03c7\u00b2"), ("X1", "normal")] and len(laws) == 8
    text = " ".join(shown["sentences"])
    assert "15 data sets" in text and "plug-in" in text
    violins = logic.render(out["current"], "violin")["figure"]
    assert {t.type for t in violins.data if t.meta == "replicates"} == {"violin"}


def test_permutation_mode_on_a_real_dataset():
    s = _settings(problem="iris", mode="permutation", R=10, T=3, mc_seed=1)
    assert s["N"] is None
    view = logic.compute_view(s)
    result = logic.result_from_dict(view["result"])
    direct = permutation_null(datasource.load_prepared(s["data"]), n_permutations=10,
                              n_estimators=3, random_state=1)
    np.testing.assert_array_equal(result.null, direct.null)
    np.testing.assert_array_equal(result.observed, direct.observed)
    shown = logic.render({"key": logic.run_key(s), "settings": s, "partial": False})
    assert shown["table_columns"][1]["id"] == "observed"
    assert "permutations of the target of iris" in shown["sentences"][0]


def test_bootstrap_of_a_real_dataset_with_scikit_learn():
    s = _settings(problem="iris", mode="bootstrap", R=5, N=None, T=2, method="sklearn-rf")
    assert s["N"] is None                          # blank N: bootstrap samples of 150 rows
    out = logic.run_monte_carlo(s, instance="f" * 32)
    text = " ".join(logic.render(out["current"])["sentences"])
    assert "bootstrap replicates of iris" in text and "value on the full sample" in text
    result = logic.result_from_dict(cache.get_json(out["current"]["key"])["result"])
    assert result.parameters["n_samples"] == 150 and result.relevant is None


def test_bootstrap_of_an_exact_problem_draws_one_sample_first():
    s = _settings(mode="bootstrap", R=6, T=3, N=300, mc_seed=4)
    result = logic.result_from_dict(logic.compute_view(s)["result"])
    assert result.exact_source == "full sample" and result.relevant == ("X1", "X2")
    assert result.parameters["replicates_from"] == "bootstrap"


def test_sweep_runs_renders_and_stops():
    spec = logic.sweep_settings(_settings(R=10, T=3, N=150), "n_estimators", "1, 4")
    out = logic.run_sweep(spec, instance="c" * 32)
    assert out["status"] == "Sweep of 2 values done."
    shown = logic.render_sweep(out["current"])
    means = [t for t in shown["figure"].data if t.meta == "mean"]
    assert [list(t.x) for t in means][0] == [1, 4]
    assert "1/\u221aT" in shown["note"]

    def progress(done, total, text=""):
        logic.request_stop("d" * 32, "sweep")

    spec = logic.sweep_settings(_settings(R=30, T=2, N=150), "n_samples", "100, 200, 300")
    out = logic.run_sweep(spec, instance="d" * 32, progress=progress)
    assert out["current"]["partial"] and out["status"].startswith("Cancelled: 1 of 3 values")
    assert cache.get_json(logic.sweep_key(spec)) is None
    assert logic.render_sweep(out["current"])["note"].startswith("Partial result")


def test_many_inputs_are_capped_with_a_sentence():
    s = _settings(problem="xor:irrelevant=62", R=4, N=60, T=1)
    shown = logic.render(logic.run_monte_carlo(s, instance="g" * 32)["current"])
    assert len(shown["table_rows"]) == 64
    assert {r["variable"] for r in shown["fit_rows"]} == {f"X{j}" for j in range(1, 61)}
    assert len([t for t in shown["figure"].data if t.meta == "replicates"]) == 16
    assert "first 60 of the 64 variables" in shown["sentences"][-1]


def test_expired_results_are_a_sentence():
    with pytest.raises(ValueError, match="no longer on the server"):
        logic.render({"key": "0" * 64, "settings": {}, "partial": False})


def test_csv_exports_are_safe_to_open():
    data = upload_csv(FORMULA_CSV, "evil.csv")
    s = logic.settings_from_controls(problem="upload", data=data, mode="bootstrap", R=5, N=None,
                                     T=2, K=1, depth=None, method="forest", mc_seed=0)
    current = logic.run_monte_carlo(s, instance="e" * 32)["current"]
    summary = list(csv.reader(io.StringIO(logic.csv_text("summary", current))))
    assert [r[0] for r in summary[1:]] == ["'=cmd|' /C calc'!A0", "'@x"]
    reps = list(csv.reader(io.StringIO(logic.csv_text("replicates", current))))
    assert reps[0] == ["replicate", "variable", "importance", "exact"] and len(reps) == 11
    result = logic.result_from_dict(cache.get_json(current["key"])["result"])
    assert float(reps[1][2]) == result.replicates[0, 0]
    assert logic.csv_filename("summary", current) == \
        "varimp-distributions-evil-bootstrap-summary.csv"
    with pytest.raises(ValueError, match="no sweep"):
        logic.csv_text("sweep", None)


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
    dash_duo.wait_for_contains_text("#dist-job-status", "20 replicates", timeout=10)
    dash_duo.wait_for_contains_text("#dist-summary", "20 data sets", timeout=10)
    assert dash_duo.find_element("#dist-table").text.count("irrelevant") == 2
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#dist-replicates", "30")
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
    dash_duo.wait_for_contains_text("#dist-job-status", "Cancelled after", timeout=30)
    dash_duo.wait_for_contains_text("#dist-partial", "Partial result", timeout=10)
    done = len(wait_for(lambda: _traces(dash_duo), what="the partial histograms")[0][1])
    assert 0 < done < 2000
    wait_for(lambda: dash_duo.find_element("#dist-fieldset").get_attribute("disabled") is None,
             what="the controls to come back")
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_bad_input_shows_a_sentence(dash_duo, dash_app):
    open_link_with_note(dash_duo, dash_app, _SMALL + "&sweep=none&T=9999", "#dist-link-notes",
                        "number of trees T was ignored")
    _histograms(dash_duo, 20)
    set_number(dash_duo, "#dist-k", "9")
    # the browser reports an out-of-range number as blank: the sentence names the range
    dash_duo.wait_for_contains_text("#dist-error", "(1 to 4)", timeout=20)
    assert "Traceback" not in dash_duo.find_element("#dist-error").text
    dash_duo.select_dcc_dropdown("#dist-sweep-param", value="N (samples per data set)")
    set_number(dash_duo, "#dist-k", "1")
    wait_for(lambda: "N (samples" in dash_duo.find_element("#dist-sweep-param").text
             and dash_duo.find_element("#dist-sweep-fieldset").get_attribute("disabled") is None
             and dash_duo.find_element("#dist-sweep-values").get_attribute("value")
             == "50,200,1000", what="the sweep controls")
    wait_for(lambda: "Sweep of 3 values" in dash_duo.find_element("#dist-sweep-job-status").text,
             what="the default N sweep")
    set_number(dash_duo, "#dist-sweep-values", "50, lots")
    dash_duo.wait_for_contains_text("#dist-sweep-error", "'lots' is not a number", timeout=20)
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
    set_number(dash_duo, "#dist-seed", "7")
    wait_for(lambda: "mc_seed=7" in dash_duo.driver.current_url, what="the seed in the URL")
    wait_for(shows_the_link_view, what="the view of seed 7")
    link = dash_duo.driver.current_url
    assert _query(urlsplit(link).query)["view"] == "violin"

    dash_duo.driver.get("about:blank")
    dash_duo.driver.get(link)
    wait_for(shows_the_link_view, what="the same view from the link")
    assert dash_duo.find_element("#dist-seed").get_attribute("value") == "7"
    assert dash_duo.find_element("#dist-sweep-values").get_attribute("value") == "50,200"
    assert dash_duo.get_logs() == []


def test_fresh_samples_fan_out_through_the_mapper(monkeypatch, tmp_path):
    # With REDIS_URL set, fanout.replicate_mapper() returns a Celery mapper; here a
    # mapper that runs the chunks itself (in reverse order) stands in for the workers.
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    seen = []

    def mapper(job, chunks):
        seen.append(len(chunks))
        return ((i, [job(s) for s in chunk]) for i, chunk in reversed(list(enumerate(chunks))))

    monkeypatch.setattr(logic.fanout, "replicate_mapper", lambda: mapper)
    view = logic.compute_view(_settings(R=12, T=4, N=150, mc_seed=9))
    direct = monte_carlo(XOR, n_replicates=12, n_samples=150, n_estimators=4, random_state=9)
    assert seen and seen[0] >= 2
    np.testing.assert_array_equal(logic.result_from_dict(view["result"]).replicates,
                                  direct.replicates)   # same numbers, whoever computes them
