"""The Measures page: its parameters, computing and rendering, and runs in the browser."""

from __future__ import annotations

import csv
import io
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest
from _browser import full_traces, open_page, set_number, visit, wait_for, wait_for_trace
from _pages import upload_csv
from _pages import first_peek, page_module
import dash
from dash.testing.wait import until

from varimp_core.api import compute_importances, load_data
from varimp_core.measures.suite import compute_measures
from varimp_core.plots.measures import measure_label
from varimp_core.plots.measures_captions import auc_table_frame
from varimp_core.result import ImportanceResult
from varimp_core.studies.noisy_protocol import (LI2019_TABLE1, StudyResult, mdi_bias_curves,
                                                noisy_feature_auc, summarise)

from varimp_core import csvtext
from pages._framework.datachoice import DataChoice
from pages._server.jobs import Progress
from pages._framework.params import Context, ParamErrors

views = page_module("measures")
auc_caption = views.auc_caption  # the study's caption and how far its job got

LED = {"problem": "led"}


@pytest.fixture(scope="module")
def page(app_module):
    import pages.measures as module

    return module


class Cancelled(Progress):
    """The progress of a job whose Cancel was clicked before it started."""

    def __init__(self):
        super().__init__(None)

    def should_stop(self) -> bool:
        return True


def _data(query=LED):
    return DataChoice.from_page(query)[0]


def _controls(**values):
    """Forest control values by parameter name, as the browser sends them."""
    base = dict(kind="rf", n_estimators=10, max_features=None, min_samples_leaf=1,
                max_depth=None, bootstrap=["on"], random_state=0, measures=["mdi", "mdi_oob"],
                criterion="auto", scale="max")
    return {**base, **values}


def _forest(page, p=7, **values):
    return page.FOREST.settings(_controls(**values), Context(p=p))


def _view(page, data, **values):
    """The side-by-side result, with the core's results rebuilt."""
    settings = _forest(page, data.n_features(), **values)
    return views.view_from_dict(views.compute_forest(settings, data, Progress(None)))


def _study(page, params, **values):
    return params.settings({**params.defaults(), **values}, Context())


def _upload(text, name):
    return DataChoice.from_params(upload_csv(text, name))


# -- settings and URL -------------------------------------------------------------------------
def test_forest_settings_are_canonical(page):
    s = page.FOREST.settings(_controls(kind="et", n_estimators="30", max_features="",
                                       max_depth="4", measures=["ranger", "mdi", "mdi"],
                                       criterion="entropy"), Context(p=7))
    assert s == {"kind": "et", "n_estimators": 30, "max_features": None, "min_samples_leaf": 1,
                 "max_depth": 4, "bootstrap": True, "random_state": 0,
                 "measures": ["mdi", "ranger"], "criterion": "entropy", "scale": "max"}
    assert views.resolve_k(None, 7) == 2 and views.resolve_k(None, 500) == 22
    assert views.resolve_k(3, 7) == 3


@pytest.mark.parametrize("controls,name,match", [
    (dict(n_estimators=1), "n_estimators", "Number of trees must be a whole number from 2 to"),
    (dict(n_estimators=None), "n_estimators", "Enter Number of trees"),
    (dict(n_estimators=2.5), "n_estimators", "whole number"),
    (dict(max_features=9), "max_features", "from 1 to 7"),
    (dict(min_samples_leaf=0), "min_samples_leaf", "Min leaf size"),
    (dict(max_depth=-1), "max_depth", "Max depth"),
    (dict(measures=[]), "measures", "Tick at least one measure"),
    (dict(kind="gbm"), "kind", "Forest kind"),
])
def test_bad_forest_settings_are_sentences(page, controls, name, match):
    settings, errors = page.FOREST.validate(_controls(**controls), Context(p=7))
    assert settings == {} and list(errors) == [name]
    assert match in errors[name]
    assert errors[name].endswith(".") and "\n" not in errors[name]
    with pytest.raises(ParamErrors):
        page.FOREST_VIEW.check(_controls(**controls), {**_data().to_store(), "p": 7})


def test_out_of_range_values_are_sentences_never_defaults(page):
    """Blank, zero, negative or huge values: a sentence for their control, and no settings."""
    for trees in (0, -7, 10**8, None):
        settings, errors = page.FOREST.validate(_controls(n_estimators=trees), Context(p=7))
        assert settings == {} and errors["n_estimators"].startswith(
            "Number of trees must be a whole number from 2 to 2,000" if trees is not None
            else "Enter Number of trees: a whole number from 2 to 2,000")
    for name in ("min_samples_leaf", "random_state"):   # blank is not the default
        _, errors = page.FOREST.validate(_controls(**{name: None}), Context(p=7))
        assert list(errors) == [name] and errors[name].startswith("Enter ")
    _, errors = page.STUDY.validate({**page.STUDY.defaults(), "n_repeats": 41}, Context())
    assert errors == {"n_repeats": "Number of repetitions must be a whole number from 1 to 40, "
                                   "not 41."}
    _, errors = page.BIAS.validate({**page.BIAS.defaults(), "n_samples": 5001, "n_estimators": 1},
                                   Context())
    assert errors == {"n_estimators": "Number of trees must be a whole number from 2 to 1,000, "
                                      "not 1.",
                      "n_samples": "Sample size N must be a whole number from 20 to 5,000, "
                                   "not 5,001."}


def test_study_and_curve_settings(page):
    assert page.STUDY.settings({"problem": "madelon", "depth_settings": ["deep", "shallow"],
                                "n_repeats": "3", "n_estimators": 50}, Context()) == {
        "problem": "madelon", "depth_settings": ["shallow", "deep"], "n_repeats": 3,
        "n_estimators": 50}
    _, errors = page.STUDY.validate({**page.STUDY.defaults(), "depth_settings": []}, Context())
    assert "shallow or deep" in errors["depth_settings"]
    _, errors = page.STUDY.validate({**page.STUDY.defaults(), "n_repeats": 41}, Context())
    assert "repetitions" in errors["n_repeats"]
    assert _study(page, page.BIAS, grid="full", n_samples="50")["n_samples"] == 50
    _, errors = page.BIAS.validate({**page.BIAS.defaults(), "n_samples": 5}, Context())
    assert "Sample size" in errors["n_samples"]


def test_query_round_trips_through_the_layout_state(page):
    query = ("problem=xor:irrelevant=1&kind=et&trees=40&K=2&leaf=3&depth=4&bootstrap=0"
             "&tree_seed=7&measures=mdi&measures=ranger&criterion=entropy&scale=raw"
             "&study=strobl-regression&study_depth=deep&reps=3&study_trees=20"
             "&bias_trees=50&bias_grid=full&bias_reps=2&bias_n=100")
    parsed = {k: (v if len(v) > 1 else v[0]) for k, v in parse_qs(query).items()}
    data = _data(parsed)
    (forest, study, bias), notes = page.initial_values(parsed, data)
    assert notes == [] and data.n_features() == 3
    assert forest["measures"] == ["mdi", "ranger"] and study["depth_settings"] == ["deep"]
    assert forest["bootstrap"] is False and forest["scale"] == "raw" and bias["grid"] == "full"
    # the page's URL (studies.register_url): the data, then each section's settings
    url = "&".join([data.query(), *(params.query(params.settings(v, Context(p=3)))
                                    for params, v in zip(page.SECTIONS, (forest, study, bias)))])
    assert parse_qs(url) == parse_qs(data.query() + "&" + query.split("&", 1)[1])


def test_link_defaults_and_bad_values(page):
    (v, study, _), _ = page.initial_values(LED, _data())
    assert v["measures"] == ["mdi", "mdi_oob", "naive_oob", "mda_holdout", "mda_oob", "ranger"]
    assert study["n_repeats"] == 3 and study["depth_settings"] == ["shallow", "deep"]
    assert v["max_features"] is None
    link = {"problem": "led", "K": "12", "reps": "0", "measures": ["mdi", "shap"]}
    (forest, study, _), notes = page.initial_values(link, _data(link))
    assert forest["max_features"] is None and study["n_repeats"] == 3
    assert forest["measures"] == v["measures"]
    assert len(notes) == 3 and any("K was ignored" in n for n in notes)
    assert any("'shap' is unknown" in n for n in notes)
    # a link's single tree or empty measure list falls back to the defaults, with notes
    link = {"problem": "led", "trees": "1", "measures": [""], "scale": "raw"}
    values, notes = page.initial_values(link, _data(link))
    assert values[0]["n_estimators"] == 100 and values[0]["measures"] == v["measures"]
    assert len(notes) == 2 and "scale=raw" in page.FOREST.query(values[0])


# -- 1. side by side --------------------------------------------------------------------------
def test_measures_on_an_exact_problem_use_a_sample_and_the_exact_mdi(page):
    settings = _forest(page, n_estimators=12, max_features=3, random_state=4, scale="raw",
                       measures=["mdi", "mdi_oob", "mda_holdout"])
    out = views.compute_forest(settings, _data(), Progress(None))
    view = views.view_from_dict(out)
    sample = load_data(problem="led", n_samples=1000, random_state=0)
    expected = compute_measures(sample.X_numeric, sample.y, measures=("mdi", "mdi_oob",
                                                                      "mda_holdout"),
                                n_estimators=12, max_features=3, random_state=4,
                                variables=list(sample.variables))
    assert list(view["results"]) == ["mdi", "mdi_oob", "mda_holdout"]
    for m, r in expected.items():
        np.testing.assert_allclose(view["results"][m].importances, r.importances, atol=1e-12)
        np.testing.assert_allclose(view["results"][m].per_tree, r.per_tree, atol=1e-12)
    exact = compute_importances(load_data(problem="led"), method="exact", max_features=3,
                                k_semantics="sklearn", criterion="gini")
    np.testing.assert_allclose(view["exact"].importances, exact.importances, atol=1e-12)
    assert view["K"] == 3 and view["missing"] == [] and view["skipped"] == []
    figure, columns, rows, note, warning, _ = views.render_forest(out, settings)
    np.testing.assert_allclose(figure.data[0].y, expected["mdi"].importances)
    np.testing.assert_allclose(figure.data[-1].y, exact.importances)
    assert "N = 1,000 rows drawn from the exact distribution" in note
    assert "Black diamonds" in note and warning == ""
    assert [c["field"] for c in columns] == ["Variable", "MDI (gini)", "MDI-oob (gini)",
                                          "MDA, held out (accuracy)", "Exact MDI (gini)"]
    np.testing.assert_allclose([r["Exact MDI (gini)"] for r in rows], exact.importances)


def test_every_header_and_axis_names_the_units_of_its_values(page):
    """Issue #14 item 6: the units come from the results, never from the page."""
    settings = _forest(page, measures=["mdi", "mdi_oob", "mda_holdout"], criterion="entropy",
                       scale="raw")
    out = views.compute_forest(settings, _data(), Progress(None))
    view = views.view_from_dict(out)
    units = {m: r.units for m, r in view["results"].items()}
    figure, columns, *_ = views.render_forest(out, settings)
    names = [c["headerName"] for c in columns]
    for i, (m, r) in enumerate(view["results"].items()):
        assert names[i + 1] == f"{measure_label(m)} ({r.units})"
    assert names[-1] == f"Exact MDI ({view['exact'].units})"
    shown = list(dict.fromkeys([*units.values(), view["exact"].units]))
    assert all(u in figure.layout.yaxis.title.text for u in shown)
    table = list(csv.DictReader(io.StringIO(views.measures_csv(out, settings, _data())[0])))
    assert {r["measure"]: r["units"] for r in table} == {**units,
                                                          "exact_mdi": view["exact"].units}
    one = _forest(page, measures=["mdi"], criterion="entropy", scale="raw")
    figure = views.render_forest(views.compute_forest(one, _data(), Progress(None)), one)[0]
    assert figure.layout.yaxis.title.text == "Importance<br>(bits)"   # MDI and exact: bits


def test_entropy_impurity_gives_bits_and_exact_bits(page):
    view = _view(page, _data(), max_features=1, measures=["mdi"], criterion="entropy")
    assert view["results"]["mdi"].units == "bits" and view["exact"].units == "bits"
    # K = 1, fully grown, entropy: the exact values are Eqn 3 (Louppe et al. 2013, Table 2).
    np.testing.assert_allclose(view["exact"].importances,
                               [0.412, 0.581, 0.531, 0.542, 0.656, 0.225, 0.372], atol=1.5e-3)


def test_entropy_forest_without_mdi_oob_shows_the_other_measures(page):
    """Issue #14: the core refuses an entropy forest's MDI-oob whose out-of-bag log score is
    -inf; the page shows the other measures and says in one sentence why MDI-oob is missing."""
    data = _data({"problem": "iris"})
    settings = _forest(page, 4, measures=["mdi", "mdi_oob", "naive_oob"], criterion="entropy")
    sample = data.load()
    with pytest.raises(ValueError, match="criterion='gini'"):   # the core refuses it here
        compute_measures(sample.X_numeric, sample.y, measures=("mdi_oob",), n_estimators=10,
                         max_features=2, criterion="entropy")
    out = views.compute_forest(settings, data, Progress(None))
    assert list(out["results"]) == ["mdi", "naive_oob"] and out["refused"] == ["mdi_oob"]
    assert not out["partial"] and out["missing"] == []
    expected = compute_measures(sample.X_numeric, sample.y, measures=("mdi", "naive_oob"),
                                n_estimators=10, max_features=2, criterion="entropy",
                                variables=list(sample.variables))
    view = views.view_from_dict(out)
    for m, r in expected.items():
        np.testing.assert_allclose(view["results"][m].importances, r.importances, atol=1e-12)
    figure, columns, _, _, warning, shown = views.render_forest(out, settings)
    assert [t.legendgroup for t in figure.data] == ["mdi", "naive_oob"]
    assert [c["field"] for c in columns] == ["Variable", "MDI (bits)", "naive-oob (bits)"]
    assert warning.startswith("MDI-oob is left out: with the entropy impurity")
    assert warning.count(".") == 2 and "choose the Gini impurity" in warning   # one sentence
    assert shown == "vi-notes"
    # the refusal is cached like a result: reading the cache gives the same view
    again = views.compute_forest(settings, data, Progress(None), compute=False)
    assert again["refused"] == ["mdi_oob"] and not again["partial"]
    # MDI-oob alone: nothing to show, and the same sentence in the error box
    alone = _forest(page, 4, measures=["mdi_oob"], criterion="entropy")
    with pytest.raises(ValueError, match="^MDI-oob is left out: with the entropy impurity"):
        views.render_forest(views.compute_forest(alone, data, Progress(None)), alone)


def test_sampled_data_without_exact_has_no_diamonds(page):
    data = _data({"problem": "iris"})
    view = _view(page, data, measures=["mdi"])
    assert view["exact"] is None and views.exact_params(data.as_dict) is None
    assert "No exact values" in views.measures_note(view, _forest(page, measures=["mdi"]))


def test_no_bootstrap_leaves_out_of_bag_measures_out_with_a_sentence(page):
    view = _view(page, _data(), bootstrap=[], measures=["mdi", "mdi_oob", "naive_oob"])
    assert list(view["results"]) == ["mdi"] and view["skipped"] == ["mdi_oob", "naive_oob"]
    warning = views.measures_warning(view)
    assert warning.startswith("MDI-oob and naive-oob are left out: they need out-of-bag rows")
    with pytest.raises(ValueError, match="MDI-oob needs out-of-bag rows.*Turn Bootstrap on"):
        _view(page, _data(), bootstrap=False, measures=["mdi_oob"])


def test_regression_target_with_a_classification_impurity_is_a_sentence(page):
    data = _data({"problem": "diabetes"})
    with pytest.raises(ValueError, match="Gini impurity is for class labels, and the target "
                                         ".* is a regression target"):
        _view(page, data, criterion="gini")
    view = _view(page, data, criterion="auto", measures=["mdi"])
    assert view["results"]["mdi"].units == "variance"


def test_a_constant_column_is_left_out_and_the_measures_run(page):
    """Issue #26: a constant column stopped Measures with a refusal; it is excluded now."""
    rows = "\n".join(f"{i % 3},7,{i % 2}" for i in range(60))
    data = _upload("a,c,y\n" + rows, "const.csv")
    assert data.load().variables == ("a",) and "constant" in dict(data.load().excluded)["c"]
    view = _view(page, data)
    assert view["results"] and all(len(r.importances) == 1 for r in view["results"].values())


def test_cancelled_view_shows_the_measures_that_finished(page):
    data = _data({"problem": "xor:irrelevant=1", "sampling": "sample", "seed": "3"})
    _view(page, data, measures=["mdi"], random_state=11)
    settings = _forest(page, 3, measures=["mdi", "ranger"], random_state=11)
    view = views.view_from_dict(views.compute_forest(settings, data, Progress(None),
                                                     compute=False))
    assert list(view["results"]) == ["mdi"] and view["missing"] == ["ranger"]
    assert "Cancelled before ranger (corrected) finished" in views.measures_warning(view)
    # Cancel before the job's first piece: it shows what the cache has, and caches nothing.
    out, shown, _ = page.FOREST_VIEW.run(_controls(measures=["mdi", "ranger"], random_state=11),
                                         data.to_store(), progress=Cancelled())
    assert out["partial"] and list(out["results"]) == ["mdi"]
    assert page.FOREST_VIEW.cached(data, shown) is None
    assert views.render_forest(out, shown)[4].startswith("Cancelled before ranger")
    nothing = views.compute_forest(_forest(page, 3, measures=["ranger"], random_state=12), data,
                                   Progress(None), compute=False)
    with pytest.raises(ValueError, match="No measure finished"):
        views.render_forest(nothing, _forest(page, 3, measures=["ranger"]))


def test_the_scale_only_redraws(page):
    """The result is cached once for both scales: the scale toggle needs no job."""
    data = _data()
    out, settings, _ = page.FOREST_VIEW.run(_controls(measures=["mdi"]), data.to_store())
    raw = {**settings, "scale": "raw"}
    hit = page.FOREST_VIEW.cached(data, raw)   # the results: core objects, as computed
    assert hit is not None and hit.keys() == out.keys()
    assert {k: v for k, v in hit.items() if k not in ("exact", "results")} == \
        {k: v for k, v in out.items() if k not in ("exact", "results")}
    assert hit["results"].keys() == out["results"].keys() == {"mdi"}
    np.testing.assert_equal(hit["results"]["mdi"].to_dict(), out["results"]["mdi"].to_dict())
    assert (hit["exact"] is None) == (out["exact"] is None)
    if out["exact"] is not None:
        np.testing.assert_equal(hit["exact"].to_dict(), out["exact"].to_dict())
    assert page.FOREST_VIEW.key(data, raw, {}) == page.FOREST_VIEW.key(data, settings, {})


def test_csv_is_tidy_and_neutralises_formula_names(page):
    assert views.safe_csv is csvtext.safe_csv   # reused, not copied
    rows = "\n".join(f"{i % 3},{i % 5},{(i % 3 + i % 2) % 2}" for i in range(80))
    data = _upload("=cmd|' /C calc'!A0,@x,y\n" + rows, "evil.csv")
    settings = _forest(page, 2)
    out = views.compute_forest(settings, data, Progress(None))
    text, filename = views.measures_csv(out, settings, data)
    table = list(csv.DictReader(io.StringIO(text)))
    assert {r["variable"] for r in table} == {"'=cmd|' /C calc'!A0", "'@x"}
    assert [r["measure"] for r in table] == ["mdi", "mdi", "mdi_oob", "mdi_oob"]
    mdi = out["results"]["mdi"].importances
    np.testing.assert_allclose([float(r["importance"]) for r in table[:2]], mdi)
    np.testing.assert_allclose([float(r["scaled"]) for r in table[:2]], mdi / mdi.max())
    assert filename == "varimp-measures-side-by-side-evil.csv"
    exact_settings = _forest(page, measures=["mdi"])
    exact_out = views.compute_forest(exact_settings, _data(), Progress(None))
    exact_rows = [r for r in csv.DictReader(io.StringIO(
        views.measures_csv(exact_out, exact_settings, _data())[0])) if r["measure"] == "exact_mdi"]
    np.testing.assert_allclose([float(r["importance"]) for r in exact_rows],
                               views.view_from_dict(exact_out)["exact"].importances)


# -- 2. noisy-feature protocol --------------------------------------------------------------
def test_auc_view_is_the_core_study(page):
    settings = _study(page, page.STUDY, problem="strobl-classification",
                      depth_settings=["shallow", "deep"], n_repeats=2, n_estimators=6)
    out = views.compute_auc(settings, None, Progress(None))
    study = StudyResult.from_dict(out["study"])
    core = noisy_feature_auc(problems=["strobl:task=classification"], seeds=range(2),
                             n_estimators=6)
    key = ["depth_setting", "measure", "seed"]
    got = study.scores.sort_values(key).reset_index(drop=True)
    want = core.scores.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    summary = study.summary.merge(core.summary, on=["problem", "task", "depth_setting",
                                                    "measure"])
    np.testing.assert_allclose(summary["mean_x"], summary["mean_y"])
    np.testing.assert_allclose(summary["std_x"], summary["std_y"])
    assert out["done"] == out["total"] == 4 and not out["partial"]
    _, _, rows, _ = views.render_auc(out, settings)
    mdi = next(r for r in rows if r["Measure"] == "MDI")
    assert mdi["Deep: paper"] == f"{LI2019_TABLE1[('classification', 'deep')]['mdi']:.2f}"
    deep = core.summary.query("depth_setting == 'deep' and measure == 'mdi'").iloc[0]
    assert mdi["Deep: mean \u00b1 sd"] == f"{deep['mean']:.2f} \u00b1 {deep['std']:.2f} (n = 2)"
    oob = next(r for r in rows if r["Measure"] == "MDA, out-of-bag")
    assert oob["Deep: paper"] == "\u2014"
    text, filename = views.auc_csv(out, settings)
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == len(core.scores)
    assert filename == "varimp-measures-auc-strobl-classification.csv"
    paper = {r["measure"]: r["paper_auc"] for r in table if r["depth_setting"] == "shallow"}
    assert float(paper["mdi_oob"]) == LI2019_TABLE1[("classification", "shallow")]["mdi_oob"]
    assert paper["mda_oob"] == ""


def test_cancelled_study_shows_the_finished_runs(page):
    done = _study(page, page.STUDY, problem="strobl-classification", depth_settings=["deep"],
                  n_repeats=2, n_estimators=6)
    views.compute_auc(done, None, Progress(None))
    more = {**done, "n_repeats": 4}
    out = views.compute_auc(more, None, Progress(None), compute=False)
    assert out["done"] == 2 and out["total"] == 4
    assert views.render_auc(out, more)[3].startswith("Cancelled after 2 of 4 runs")
    # Cancel between runs: the finished runs are drawn, and the whole is not cached.
    out, shown, _ = page.AUC_VIEW.run({**more, "depth_settings": ["deep"]}, _data().to_store(),
                                      progress=Cancelled())
    assert out["partial"] and out["done"] == 2 and page.AUC_VIEW.cached(None, shown) is None
    assert views.render_auc(out, shown)[3].startswith("Cancelled after 2 of 4 runs")
    none = views.compute_auc({**more, "n_estimators": 7}, None, Progress(None), compute=False)
    with pytest.raises(ValueError) as err:
        views.render_auc(none, more)
    assert str(err.value) == "Cancelled before the first repetition finished."


def test_madelon_has_no_paper_values(page):
    scores = pd.DataFrame([("madelon", "classification", "deep", 1, "mdi", 0, 0.9)],
                          columns=["problem", "task", "depth_setting", "min_samples_leaf",
                                   "measure", "seed", "auc"])
    summary = summarise(scores, ["problem", "task", "depth_setting", "measure"], "auc")
    rows = auc_table_frame(summary).to_dict("records")
    assert rows == [{"Measure": "MDI", "Deep: mean \u00b1 sd": "0.90 (n = 1)",
                     "Deep: paper": "\u2014"}]
    assert "no madelon numbers" in auc_caption("madelon", n_estimators=100, max_features=10,
                                               n_repeats=1, done=1, total=1)


# -- 3. bias curves ------------------------------------------------------------------------------
def test_bias_view_is_the_core_curves(page):
    settings = _study(page, page.BIAS, n_estimators=4, grid="coarse", n_repeats=1, n_samples=60)
    out = views.compute_bias(settings, None, Progress(None))
    leaf, depth = views.BIAS_GRIDS["coarse"]
    core = mdi_bias_curves(min_samples_leaf=leaf, max_depth=depth, n_samples=60,
                           n_estimators=4)
    key = ["parameter", "value", "measure", "variable"]
    got = StudyResult.from_dict(out["study"]).scores.sort_values(key).reset_index(drop=True)
    want = core.scores.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert out["done"] == out["total"] == 22
    # the first forests cover both curves (a cancelled run draws both)
    assert {u[1] for u in views.bias_units(settings)[:2]} == {"min_samples_leaf", "max_depth"}
    figure, note = views.render_bias(out, settings)
    assert len(figure.data) == 20 and "only X2 is relevant" in note
    # the y axes name the units of the core's result (Gini forests)
    assert StudyResult.from_dict(out["study"]).units == core.units == {"mdi": "gini",
                                                                      "mdi_oob": "gini"}
    assert [figure.layout[a].title.text for a in ("yaxis", "yaxis3")] == ["MDI (gini)",
                                                                          "MDI-oob (gini)"]
    twice = {**settings, "n_repeats": 2}
    partial = views.compute_bias(twice, None, Progress(None), compute=False)
    assert partial["done"] == 22 and partial["total"] == 44
    assert views.render_bias(partial, twice)[1].startswith("Cancelled after 22 of 44 forests")
    assert views.bias_csv(out)[1] == "varimp-measures-bias-curves.csv"


class Recording(Progress):
    """A job's progress that keeps every partial result the job hands out, unthrottled."""

    def __init__(self):
        super().__init__(None)
        self.published = []

    def publish(self, result, every: float = 1.5) -> None:
        self.published.append(result)


def test_bias_curves_are_drawn_forest_by_forest_while_the_study_runs(page):
    """Issue 12: a first result in seconds. After each of the 22 forests but the last, the
    curves of the forests done so far are handed out with ``running``; the caption says how
    far the study got, and the final study is the one a run without drawing gives."""
    settings = _study(page, page.BIAS, n_estimators=3, grid="coarse", n_repeats=1, n_samples=40)
    progress = Recording()
    out = views.compute_bias(settings, None, progress)
    assert [r["done"] for r in progress.published] == list(range(1, 22))
    assert all(r["running"] and r["partial"] for r in progress.published)
    first = progress.published[0]
    assert views.render_bias(first, settings)[1].startswith(
        "So far 1 of 22 forests: the curves show those; more are coming.")
    assert "running" not in out and out["done"] == 22 and not out["partial"]
    again = views.compute_bias(settings, None, Progress(None), compute=False)  # from the cache
    assert again == out


def test_studies_are_cached_whatever_the_data(page):
    """A second visit is instant: the studies' results are keyed by their settings only."""
    settings = _study(page, page.BIAS, n_estimators=4, n_samples=60)
    out, _, data = page.BIAS_VIEW.run(settings, _data().to_store())
    assert data is None and page.BIAS_VIEW.data(_data({"problem": "iris"}).to_store()) is None
    assert page.BIAS_VIEW.cached(None, settings) == out


# -- the page module ----------------------------------------------------------------------------
def test_page_is_registered(page):
    import dash

    entry = dash.page_registry["pages.measures"]
    assert entry["path"] == "/measures" and entry["name"] == "Measures" and entry["order"] == 4
    text = str(page.layout(problem="led"))
    for id_ in ("meas-graph", "meas-auc-graph", "meas-bias-graph", "meas-job-cancel",
                "meas-auc-job-cancel", "meas-bias-job-cancel"):
        assert id_ in text
    assert "'format': 'png'" in text
    assert "Data: " in text and "led (exact, 7 inputs)" in text


# -- in the browser ------------------------------------------------------------------------------
#: Light settings for the two studies, so every page load stays quick.
LIGHT = ("&study_depth=deep&reps=2&study_trees=4&bias_trees=3&bias_n=40")

def _traces(dash_duo, graph="#meas-graph"):
    return full_traces(dash_duo, graph)


def _wait_for_trace(dash_duo, expected):
    return wait_for_trace(dash_duo, "#meas-graph", expected, timeout=40)


def _expected(K, *, trees=6, measures=("mdi", "mdi_oob"), seed=0, scale=True, **kw):
    sample = load_data(problem="led", n_samples=1000, random_state=0)
    res = compute_measures(sample.X_numeric, sample.y, measures=measures, n_estimators=trees,
                           max_features=K, random_state=seed, variables=list(sample.variables),
                           **kw)
    return {m: (r.importances / np.abs(r.importances).max() if scale else r.importances)
            for m, r in res.items()}


@pytest.mark.browser
def test_page_loads_and_follows_k(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/measures?problem=led&trees=6"
              "&measures=mdi&measures=mdi_oob" + LIGHT)
    _wait_for_trace(dash_duo, _expected(2)["mdi"])        # K blank: sqrt(7) -> 2
    dash_duo.wait_for_contains_text("#meas-note", "Black diamonds", timeout=10)
    # the studies load too: AUC table with the paper's deep MDI, and the curves
    dash_duo.wait_for_contains_text("#meas-auc-table", "0.12", timeout=60)
    until(lambda: len(_traces(dash_duo, "#meas-bias-graph") or []) == 20, 60)
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#meas-k", 3)
    expected = _expected(3)
    _wait_for_trace(dash_duo, expected["mdi"])
    # the sampled measures are drawn as they finish; the exact diamonds come with the last
    traces = until(lambda: (t := _traces(dash_duo)) and t[-1][2] == "exact" and t, 40)
    assert np.allclose(traces[0][1], expected["mdi"], atol=1e-12)
    assert np.allclose(traces[1][1], expected["mdi_oob"], atol=1e-12)
    exact = compute_importances(load_data(problem="led"), method="exact", max_features=3,
                                k_semantics="sklearn", criterion="gini").importances
    assert traces[-1][2] == "exact" and np.allclose(traces[-1][1], exact / exact.max())
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("K") == ["3"], 10)

    # the scale toggle redraws without a job: raw values
    dash_duo.find_element("#meas-scale input[value='raw']").click()
    _wait_for_trace(dash_duo, _expected(3, scale=False)["mdi"])
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("scale") == ["raw"],
          10)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_bad_input_is_a_sentence_on_the_page(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/measures?problem=led&trees=6"
              "&measures=mdi&measures=mdi_oob" + LIGHT)
    first = _expected(2)["mdi"]
    _wait_for_trace(dash_duo, first)

    # a single tree: a sentence beside its control, and nothing is recomputed
    set_number(dash_duo, "#meas-trees", 1)
    dash_duo.wait_for_contains_text(
        "#meas-trees-error", "Number of trees must be a whole number from 2 to 2,000, not 1.",
        timeout=30)
    dash_duo.wait_for_contains_text("#meas-job-status", "Nothing was recomputed", timeout=10)
    assert np.allclose(_traces(dash_duo)[0][1], first)     # the last good view stays
    assert parse_qs(urlsplit(dash_duo.driver.current_url).query)["trees"] == ["6"]   # and URL
    set_number(dash_duo, "#meas-trees", 6)
    until(lambda: dash_duo.find_element("#meas-trees-error").text == "", 30)

    # no out-of-bag rows: MDI-oob is left out, with a sentence
    dash_duo.find_element("#meas-bootstrap input").click()
    dash_duo.wait_for_contains_text("#meas-warning", "MDI-oob is left out", timeout=30)
    until(lambda: [t[2] for t in _traces(dash_duo)] == ["mdi", "exact"], 30)

    # a study's control too: its own sentence, and its curves stay
    until(lambda: len(_traces(dash_duo, "#meas-bias-graph") or []) == 20, 60)
    curves = _traces(dash_duo, "#meas-bias-graph")
    set_number(dash_duo, "#meas-bias-n", 5001)
    dash_duo.wait_for_contains_text("#meas-bias-n-error", "Sample size N must be a whole "
                                    "number from 20 to 5,000, not 5,001.", timeout=30)
    dash_duo.wait_for_contains_text("#meas-bias-job-status", "Nothing was recomputed",
                                    timeout=10)
    assert _traces(dash_duo, "#meas-bias-graph") == curves
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []

    # a regression target with a classification-only impurity
    visit(dash_duo, "/measures?problem=diabetes&trees=6"
          "&measures=mdi&criterion=gini" + LIGHT)
    dash_duo.wait_for_contains_text("#meas-error", "is a regression target", timeout=40)

    # a constant column
    rows = "\n".join(f"{i % 3},7,{i % 2}" for i in range(60))
    data = _upload("a,c,y\n" + rows, "const.csv")
    visit(dash_duo, "/measures?" + data.query() + "&trees=6&measures=mdi" + LIGHT)
    # the constant column is excluded (issue #26): the measure is drawn for 'a' alone
    wait_for(lambda: _traces(dash_duo), timeout=40, what="the measure without 'c'")
    assert dash_duo.find_element("#meas-error").text == ""
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_shared_link_reproduces_the_view(dash_duo, dash_app):
    query = ("problem=led&kind=et&trees=8&K=2&leaf=3&depth=5&bootstrap=1&tree_seed=5"
             "&measures=mdi&measures=ranger&criterion=entropy&scale=raw"
             "&study=strobl-regression&study_depth=deep&reps=2&study_trees=4"
             "&bias_trees=3&bias_grid=coarse&bias_reps=1&bias_n=40")
    sample = load_data(problem="led", n_samples=1000, random_state=0)
    res = compute_measures(sample.X_numeric, sample.y, kind="et", measures=("mdi", "ranger"),
                           n_estimators=8, max_features=2, min_samples_leaf=3, max_depth=5,
                           criterion="entropy", random_state=5, variables=list(sample.variables))
    exact = compute_importances(load_data(problem="led"), method="exact", max_features=2,
                                max_depth=5, k_semantics="sklearn", criterion="entropy")
    open_page(dash_duo, dash_app, "/measures?" + query)
    _wait_for_trace(dash_duo, res["mdi"].importances)
    # The measures are drawn as their batches arrive (MDI first): wait for each trace.
    wait_for_trace(dash_duo, "#meas-graph", res["ranger"].importances, trace=1, timeout=60)
    wait_for_trace(dash_duo, "#meas-graph", exact.importances, trace=2, timeout=60)
    assert dash_duo.find_element("#meas-kind input[value='et']").is_selected()
    assert dash_duo.find_element("#meas-scale input[value='raw']").is_selected()
    assert dash_duo.find_element("#meas-k").get_attribute("value") == "2"
    assert dash_duo.find_element("#meas-leaf").get_attribute("value") == "3"
    assert dash_duo.find_element("#meas-tree-seed").get_attribute("value") == "5"
    assert not dash_duo.find_element("#meas-measures input[value='mdi_oob']").is_selected()
    dash_duo.wait_for_contains_text(
        "#meas-auc-table", f"{LI2019_TABLE1[('regression', 'deep')]['mdi_oob']:.2f}", timeout=60)
    shown = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert shown["measures"] == ["mdi", "ranger"] and shown["study"] == ["strobl-regression"]

    # the CSV holds the same numbers
    dash_duo.find_element("#meas-download-button").click()
    path = Path(dash_duo.download_path) / "varimp-measures-side-by-side-led.csv"
    until(lambda: path.exists() and path.stat().st_size > 0, 20)
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    by = {m: [float(r["importance"]) for r in rows if r["measure"] == m]
          for m in ("mdi", "ranger", "exact_mdi")}
    np.testing.assert_allclose(by["mdi"], res["mdi"].importances)
    np.testing.assert_allclose(by["ranger"], res["ranger"].importances)
    np.testing.assert_allclose(by["exact_mdi"], exact.importances)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_cancel_keeps_the_finished_forests(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/measures?problem=led&trees=6&measures=mdi"
              "&study_depth=deep&reps=1&study_trees=4"
              "&bias_trees=600&bias_grid=full&bias_n=3000")
    # 70 forests of 600 trees on 3,000 rows take far longer than the test waits.
    message = "#meas-bias-job-message"
    until(lambda: "Forest 3 of 70" in dash_duo.find_element(message).text, 120)
    fieldset = dash_duo.find_element("#meas-bias-fieldset")
    assert fieldset.get_attribute("disabled") is not None
    dash_duo.find_element("#meas-bias-job-cancel").click()
    dash_duo.wait_for_contains_text("#meas-bias-note", "Cancelled after", timeout=30)
    assert "of 70 forests" in dash_duo.find_element("#meas-bias-note").text
    until(lambda: dash_duo.find_element("#meas-bias-fieldset").get_attribute("disabled")
          is None, 20)
    dash_duo.wait_for_contains_text("#meas-bias-job-status", "Cancelled", timeout=10)
    assert len(_traces(dash_duo, "#meas-bias-graph") or []) == 20   # both curves drawn
    assert dash_duo.get_logs() == []


def test_a_download_with_nothing_finished_says_why(page):
    """Before a run of these settings has finished there is no CSV, and the button says so
    beside it rather than doing nothing."""
    values = {**page.STUDY.defaults(), "n_estimators": 7}   # a run nobody computed
    sent, note = page.AUC_VIEW.download(views.auc_csv, values, None)
    assert sent is dash.no_update and note == "No repetition has finished."
    values = {**page.BIAS.defaults(), "n_estimators": 7}
    sent, note = page.BIAS_VIEW.download(views.bias_csv, values, None)
    assert sent is dash.no_update and note == "No forest has finished."


def test_the_default_studies_are_warmed_at_start_unless_switched_off(page, monkeypatch):
    """At start a background process computes (and draws) the page's default studies, so a
    first visit reads them from the cache; the tests switch it off (VARIMP_WARM=0).  Warming
    looks for each run's own result: one the cache evicted is computed again at the next
    start (no lasting "warmed" flag outlives the results)."""
    from pages._server import cache
    from pages._framework.view import warm

    assert page.WARMING is None and warm("anything", []) is None
    monkeypatch.setenv("VARIMP_WARM", "1")
    values = {**page.BIAS.defaults(), "n_estimators": 2, "n_samples": 20}
    data, settings = page.BIAS_VIEW.check(values, None)
    assert page.BIAS_VIEW.cached(data, settings) is None
    runs = [(page.BIAS_VIEW, {**values, "n_estimators": 10**9}, None),  # refused: skipped
            (page.BIAS_VIEW, values, None)]
    name = f"test-{uuid.uuid4().hex}"  # one server restarted: the same name both times
    for evicted in (False, True):
        if evicted:  # the LRU cache drops the result and its drawing, as under memory pressure
            for key in (page.BIAS_VIEW.key(data, settings, {}),
                        page.BIAS_VIEW.drawn_key(data, settings, {})):
                cache.get_cache().delete(key)
            assert page.BIAS_VIEW.cached(data, settings) is None
        process = warm(name, runs)
        process.join(120)
        assert process.exitcode == 0
        out = page.BIAS_VIEW.cached(data, settings)
        assert out is not None and out["done"] == out["total"] == 22  # coarse grid: 11 + 11
        assert cache.get_json(page.BIAS_VIEW.drawn_key(data, settings, {})) is not None


def test_a_first_visit_after_warming_draws_every_view_from_the_cache(page):
    """After the start's warming work (the page's own runs, its real default settings), the
    plain callback of each of the three views, given the values a first visit's controls
    hold, is a cache hit: it draws and starts no job."""
    from pages._framework.view import warm_now

    assert [view for view, _, _ in page.WARM_RUNS] == [page.AUC_VIEW, page.BIAS_VIEW,
                                                       page.FOREST_VIEW]
    warm_now(page.WARM_RUNS)
    layout = page.layout()
    for view in page.VIEWS:
        out = first_peek(view, layout)
        status, miss = out[-3], out[-5]
        assert status == "Done (cached)." and miss is dash.no_update, view.prefix
        assert all(o is not dash.no_update for o in out[:len(view.outputs)]), view.prefix


def test_each_measure_is_stored_once_and_the_page_refers_to_it(page, monkeypatch, tmp_path):
    """Issue #25 item 3: the page's result copied each measure's serialised result beside
    the per-measure entry (two copies).  Each measure is now a part of its own: serialised
    once, the page's cached result holds references, a hit rebuilds each once, and a measure
    the cache evicts makes the page's result a miss, computed again."""
    import collections

    from pages._framework import parts
    from pages._server import cache

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))   # nothing cached yet
    calls = collections.Counter()
    real_to, real_from = ImportanceResult.to_dict, ImportanceResult.from_dict.__func__

    def to_dict(self):
        calls["to_dict"] += 1
        return real_to(self)

    def from_dict(cls, d):
        calls["from_dict"] += 1
        return real_from(cls, d)

    monkeypatch.setattr(ImportanceResult, "to_dict", to_dict)
    monkeypatch.setattr(ImportanceResult, "from_dict", classmethod(from_dict))
    data = _data({"problem": "iris"})                    # no exact MDI: the measures alone
    out, settings, _ = page.FOREST_VIEW.run(_controls(measures=["mdi", "mdi_oob", "naive_oob"]),
                                            data.to_store())
    assert list(out["results"]) == ["mdi", "mdi_oob", "naive_oob"] and out["exact"] is None
    assert calls == {"to_dict": 3}                       # one serialisation per measure
    stored = cache.get_json(page.FOREST_VIEW.key(data, settings, {}))
    keys = parts.part_keys(stored)
    assert len(keys) == 3 and all(stored["results"][m] == {"__part__": k}
                                  for m, k in zip(out["results"], keys))
    calls.clear()
    hit = page.FOREST_VIEW.cached(data, settings)
    assert calls == {"from_dict": 3}
    for m, r in out["results"].items():
        np.testing.assert_array_equal(hit["results"][m].importances, r.importances)
    cache.get_cache().delete(keys[1])                    # the LRU evicted MDI-oob
    assert page.FOREST_VIEW.cached(data, settings) is None
    again, _, _ = page.FOREST_VIEW.run(_controls(measures=["mdi", "mdi_oob", "naive_oob"]),
                                       data.to_store())
    np.testing.assert_array_equal(again["results"]["mdi_oob"].importances,
                                  out["results"]["mdi_oob"].importances)
