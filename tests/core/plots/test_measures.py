"""Figure builders of varimp_core.plots.measures: the figures carry the core's numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from varimp_core.api import compute_importances, load_data
from varimp_core.measures.suite import compute_measures
from varimp_core.studies.noisy_protocol import (LI2019_TABLE1, bias_curve_summary, mdi_bias_curves,
                                                noisy_feature_auc)
from varimp_core.plots.measures import (MEASURE_COLORS, make_auc_figure, make_bias_curves,
                                        make_measures_figure, measure_label, scale_values)
from varimp_core.plots.style import EXACT_COLOR, variable_color
from varimp_core.result import ImportanceResult

MEASURES = ("mdi", "mdi_oob", "mda_holdout", "ranger")


@pytest.fixture(scope="module")
def led_measures():
    data = load_data(problem="led", n_samples=600, random_state=1)
    return compute_measures(data.X_numeric, data.y, measures=MEASURES, n_estimators=12,
                            max_features=2, random_state=3, variables=list(data.variables))


@pytest.fixture(scope="module")
def led_exact():
    return compute_importances(load_data(problem="led"), method="exact", max_features=2,
                               k_semantics="sklearn", criterion="gini")


@pytest.fixture(scope="module")
def auc_study():
    return noisy_feature_auc(problems=["strobl:task=classification"],
                             depth_settings=("shallow", "deep"), seeds=[0, 1], n_estimators=8)


@pytest.fixture(scope="module")
def curves():
    return mdi_bias_curves(min_samples_leaf=[1, 5, 20], max_depth=[1, 3, 8], n_estimators=10,
                           seeds=(0, 1))


def _bars(fig):
    return [t for t in fig.data if t.type == "bar"]


# -- side by side ----------------------------------------------------------------------
def test_raw_bars_are_the_core_numbers(led_measures):
    fig = make_measures_figure(led_measures, scale="raw")
    bars = _bars(fig)
    assert [b.legendgroup for b in bars] == list(MEASURES)
    for b, m in zip(bars, MEASURES):
        r = led_measures[m]
        np.testing.assert_array_equal(np.asarray(b.y, dtype=float), r.importances)
        np.testing.assert_array_equal(np.asarray(b.customdata[:, 1], dtype=float), r.importances)
        np.testing.assert_allclose(b.error_y.array, r.importances_sem)
        assert b.name == f"{measure_label(m)} ({r.units})"
        assert b.marker.color == MEASURE_COLORS[m]
    assert list(fig.layout.xaxis.ticktext) == list(led_measures["mdi"].variables)
    # The measures' own units, by their definitions: MDI, MDI-oob and ranger's corrected
    # impurity of a Gini forest in Gini units, held-out MDA in accuracy; each named once.
    assert fig.layout.yaxis.title.text == "Importance<br>(gini, accuracy)"


def test_scaled_bars_peak_at_one(led_measures):
    fig = make_measures_figure(led_measures)  # scale="max"
    for b, m in zip(_bars(fig), MEASURES):
        r = led_measures[m]
        top = np.max(np.abs(r.importances))
        np.testing.assert_allclose(b.y, r.importances / top, rtol=0, atol=1e-15)
        np.testing.assert_allclose(b.error_y.array, r.importances_sem / top)
        # the hover still reports the raw value
        np.testing.assert_array_equal(np.asarray(b.customdata[:, 1], dtype=float), r.importances)
        assert np.max(np.abs(b.y)) == pytest.approx(1.0)


def test_bars_of_one_variable_are_grouped_around_it(led_measures):
    fig = make_measures_figure(led_measures)
    xs = np.array([b.x for b in _bars(fig)])           # (measures, variables)
    np.testing.assert_allclose(xs.mean(axis=0), np.arange(7), atol=1e-12)
    assert np.all(np.diff(xs, axis=0) > 0)             # measures left to right, in order
    assert xs.max() - xs.min() < 7


def test_exact_diamonds_sit_on_the_mdi_bars(led_measures, led_exact):
    for scale in ("raw", "max"):
        fig = make_measures_figure(led_measures, led_exact, scale=scale)
        diamonds = fig.data[-1]
        assert diamonds.type == "scatter" and diamonds.marker.symbol == "diamond"
        assert diamonds.marker.color == EXACT_COLOR
        np.testing.assert_array_equal(diamonds.x, _bars(fig)[0].x)
        expected = led_exact.importances
        if scale == "max":
            expected = expected / expected.max()
        np.testing.assert_allclose(diamonds.y, expected, atol=1e-15)
    # LED, K = 2, Gini, exact: X5 has the largest MDI (0.175 gini)
    assert led_exact.importances.argmax() == 4


def test_exact_without_mdi_marks_the_group_centres(led_measures, led_exact):
    fig = make_measures_figure({m: led_measures[m] for m in ("mdi_oob", "ranger")}, led_exact)
    np.testing.assert_allclose(fig.data[-1].x, np.arange(7))


def _result(values, names=None, units="gini"):
    names = names or [f"x{i + 1}" for i in range(len(values))]
    return ImportanceResult(variables=tuple(names), importances=np.asarray(values, dtype=float),
                            by_degree=None, method="sklearn-rf", units=units)


def test_many_variables_keep_the_largest_first():
    rng = np.random.default_rng(0)
    a, b = rng.random(40), rng.random(40)
    fig = make_measures_figure({"mdi": _result(a), "ranger": _result(b)}, max_variables=10)
    ref = (a / a.max() + b / b.max()) / 2
    order = np.argsort(-ref, kind="stable")[:10]
    assert list(fig.layout.xaxis.ticktext) == [f"x{i + 1}" for i in order]
    np.testing.assert_allclose(_bars(fig)[0].y, a[order] / a.max())
    assert "10 of 40" in fig.layout.xaxis.title.text


def test_scale_values_handles_signs_and_zeros():
    v, d = scale_values([-0.2, 0.1, 0.05])
    np.testing.assert_allclose(v, [-1.0, 0.5, 0.25])
    assert d == pytest.approx(0.2)
    v, d = scale_values([0.0, 0.0])
    np.testing.assert_array_equal(v, [0.0, 0.0])
    assert d == 1.0
    np.testing.assert_array_equal(scale_values([3.0, 1.0], "raw")[0], [3.0, 1.0])
    with pytest.raises(ValueError, match="scale='log'"):
        scale_values([1.0], "log")


def test_mismatched_variables_are_refused(led_measures):
    with pytest.raises(ValueError, match="same variables"):
        make_measures_figure(led_measures, _result(np.ones(3)))
    with pytest.raises(ValueError, match="other variables"):
        make_measures_figure({"mdi": led_measures["mdi"], "ranger": _result(np.ones(7))})
    with pytest.raises(ValueError, match="non-empty"):
        make_measures_figure({})


# -- AUC study ---------------------------------------------------------------------------
def test_auc_boxes_are_the_scores_and_paper_marks_are_table1(auc_study):
    fig = make_auc_figure(auc_study)
    scores = auc_study.scores
    boxes = [t for t in fig.data if t.type == "box"]
    assert len(boxes) == 2 * scores["measure"].nunique()
    axes = {"shallow": "x", "deep": "x2"}
    for b in boxes:
        depth = next(d for d, ax in axes.items() if b.xaxis == ax)
        rows = scores[(scores["depth_setting"] == depth) & (scores["measure"] == b.legendgroup)]
        np.testing.assert_array_equal(b.y, rows["auc"].to_numpy())
        assert b.boxpoints == "all"
    marks = [t for t in fig.data if t.type == "scatter"]
    assert len(marks) == 2 and marks[0].showlegend and not marks[1].showlegend
    for t, depth in zip(marks, ("shallow", "deep")):
        paper = LI2019_TABLE1[("classification", depth)]
        labels = {measure_label(m): m for m in paper}
        assert set(t.x) <= set(labels)
        # every measure of the study that the paper reports is marked, with the paper's value
        assert set(t.x) == {measure_label(m) for m in scores["measure"].unique() if m in paper}
        for x, y in zip(t.x, t.y):
            assert y == paper[labels[x]]
    assert "mda_oob" not in LI2019_TABLE1[("classification", "deep")]  # not in the paper


def test_auc_figure_marks_regression_values_and_not_madelon():
    rows = []
    for problem, task in (("strobl", "regression"), ("madelon", "classification")):
        for seed in (0, 1):
            for m, auc in (("mdi", 0.3), ("mdi_oob", 0.6)):
                rows.append((problem, task, "deep", 1, m, seed, auc + seed / 10))
    scores = pd.DataFrame(rows, columns=["problem", "task", "depth_setting", "min_samples_leaf",
                                         "measure", "seed", "auc"])
    fig = make_auc_figure(scores)
    marks = [t for t in fig.data if t.type == "scatter"]
    assert len(marks) == 1 and marks[0].xaxis == "x"   # strobl panel only
    assert list(marks[0].y) == [LI2019_TABLE1[("regression", "deep")]["mdi"],
                                LI2019_TABLE1[("regression", "deep")]["mdi_oob"]]
    titles = [a.text for a in fig.layout.annotations]
    assert any("madelon" in t for t in titles) and any("regression" in t for t in titles)


def test_auc_figure_of_no_repetition_says_so():
    empty = pd.DataFrame(columns=["problem", "task", "depth_setting", "min_samples_leaf",
                                  "measure", "seed", "auc"])
    fig = make_auc_figure(empty)
    assert len(fig.data) == 0 and "No repetition" in fig.layout.annotations[0].text


# -- bias curves ---------------------------------------------------------------------------------
def test_bias_curves_are_the_core_means(curves):
    fig = make_bias_curves(curves)
    summary = curves.summary
    lines = [t for t in fig.data if t.type == "scatter"]
    assert len(lines) == 2 * 2 * 5   # measures x parameters x variables
    panel = {("x", "y"): ("mdi", "min_samples_leaf"), ("x2", "y2"): ("mdi", "max_depth"),
             ("x3", "y3"): ("mdi_oob", "min_samples_leaf"), ("x4", "y4"): ("mdi_oob", "max_depth")}
    for t in lines:
        m, par = panel[(t.xaxis, t.yaxis)]
        rows = summary[(summary["measure"] == m) & (summary["parameter"] == par)
                       & (summary["variable"] == t.legendgroup)].sort_values("value")
        np.testing.assert_array_equal(t.x, rows["value"].to_numpy())
        np.testing.assert_allclose(t.y, rows["mean"].to_numpy(), rtol=0, atol=1e-15)
        np.testing.assert_allclose(t.error_y.array, rows["sem"].to_numpy())   # two seeds
    x2 = [t for t in lines if t.legendgroup == "X2"]
    assert all(t.line.width == 3 and t.line.dash == "solid" for t in x2)
    assert x2[0].line.color == variable_color(1) and x2[0].name == "X2 (relevant)"
    assert sum(t.showlegend for t in lines) == 5


def test_bias_curves_name_the_units_of_the_study(curves):
    assert curves.units == {"mdi": "gini", "mdi_oob": "gini"}
    titles = lambda fig: [fig.layout[a].title.text for a in ("yaxis", "yaxis3")]  # noqa: E731
    assert titles(make_bias_curves(curves)) == ["MDI (gini)", "MDI-oob (gini)"]
    assert titles(make_bias_curves(curves.summary)) == ["MDI", "MDI-oob"]   # a table has none
    assert titles(make_bias_curves(curves.summary, units={"mdi": "bits"}))[0] == "MDI (bits)"


def test_bias_curves_from_scores_average_over_seeds(curves):
    a, b = make_bias_curves(curves), make_bias_curves(bias_curve_summary(curves.scores))
    for s, t in zip(a.data, b.data):
        np.testing.assert_allclose(s.y, t.y, atol=1e-15)


def test_bias_curves_of_one_seed_have_no_error_bars():
    one = mdi_bias_curves(min_samples_leaf=[1, 10], max_depth=[2], n_estimators=5)
    fig = make_bias_curves(one)
    assert all(t.error_y.array is None for t in fig.data)
    # Fig. 1 shape: with 1 seed, the MDI of each noisy feature at leaf 1 is above leaf 10.
    s = one.summary[(one.summary["measure"] == "mdi")
                    & (one.summary["parameter"] == "min_samples_leaf")]
    wide = s.pivot(index="variable", columns="value", values="mean")
    assert (wide.loc[["X1", "X3", "X4", "X5"], 1] > wide.loc[["X1", "X3", "X4", "X5"], 10]).all()


_TITLE = """
const gd = document.querySelector('.js-plotly-plot');
const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const title = gd.querySelector('.g-ytitle text');
return {svg: box(gd.querySelector('svg.main-svg')), title: title && box(title),
        ticks: Array.from(gd.querySelectorAll('.ytick text')).map(box)};
"""


@pytest.mark.browser
@pytest.mark.parametrize("scale", ["max", "raw"])
@pytest.mark.parametrize("height, font", [(460, 13), (300, 18)], ids=["page", "presentation"])
def test_the_y_axis_title_is_inside_the_figure(dash_br, tmp_path, led_measures, led_exact,
                                                scale, height, font):
    """The page's height and text, and presentation mode's smallest figure (300 px, 18 px
    text; assets/varimp.js): the whole title is inside the figure, left of the tick labels."""
    from _browser import draw_static

    fig = make_measures_figure(led_measures, led_exact, scale=scale, height=height)
    fig.update_layout(width=900, font=dict(size=font), legend=dict(font=dict(size=font)))
    draw_static(dash_br, fig, tmp_path, ".js-plotly-plot .g-ytitle text")
    shown = dash_br.driver.execute_script(_TITLE)
    svg, title = shown["svg"], shown["title"]
    assert svg[1] <= title[1] and title[3] <= svg[3] and svg[0] <= title[0], (svg, title)
    assert all(title[2] <= tick[0] for tick in shown["ticks"]), (title, shown["ticks"])
