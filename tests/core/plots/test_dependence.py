"""Dependence figures: PD, ICE, 2-D PD and dependence over responses draw the core's numbers."""

import numpy as np
import pytest

from varimp_core.local.response_dependence import dependence_over_responses
from varimp_core.local.partial_dependence import partial_dependence
from varimp_core.local.importance import local_importance
from varimp_core.plots.dependence import (ICE_OPACITY, make_dependence_over_responses,
                                          make_pd2_figure, make_pd_figure)
from varimp_core.plots.style import variable_color
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest

NAMES = ["A", "B", "C"]


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 3))
    y = 4 * X[:, 0] + np.sin(6 * X[:, 1]) + 0.1 * rng.normal(size=200)
    forest = fit_sklearn_forest(X, y, kind="rf", task="regression", n_estimators=20,
                                max_features=None)
    return forest, X


@pytest.fixture(scope="module")
def classification():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(240, 3))
    y = (X[:, 0] > 0.4).astype(int) + (X[:, 1] > 0.5).astype(int)
    forest = fit_sklearn_forest(X, y, kind="et", n_estimators=20, max_features=None)
    return forest, X


def _split_ice(trace):
    """ICE lines from one trace with None between lines."""
    lines, line = [], []
    for v in trace.y:
        if v is None:
            lines.append(line)
            line = []
        else:
            line.append(v)
    return np.array(lines, dtype=float)


def _traces(fig, meta):
    return [t for t in fig.data if t.meta == meta]


def test_pd_line_and_ice_lines_are_the_cores(regression):
    forest, X = regression
    r = partial_dependence(forest, X, "A", kind="both", feature_names=NAMES, grid_resolution=15,
                           max_ice_lines=25, random_state=3)
    fig = make_pd_figure(r, color=variable_color(0))
    (pd_trace,), (ice,) = _traces(fig, "pd"), _traces(fig, "ice")
    np.testing.assert_array_equal(pd_trace.x, r.grid[0])
    np.testing.assert_array_equal(pd_trace.y, r.average[0])
    lines = _split_ice(ice)
    np.testing.assert_array_equal(lines, r.individual[0])
    assert lines.shape == (25, 15)
    # ICE thin and translucent, PD thick
    assert ice.opacity == ICE_OPACITY and ice.line.width < pd_trace.line.width
    assert ice.line.color == variable_color(0)
    assert "25 ICE lines" in fig.layout.title.text


def test_pd_is_the_mean_of_all_ice_lines(regression):
    # Goldstein et al. (2015): the partial dependence is the average of the ICE curves
    forest, X = regression
    r = partial_dependence(forest, X, 1, kind="both", feature_names=NAMES, grid_resolution=10,
                           max_ice_lines=None)
    fig = make_pd_figure(r)
    lines = _split_ice(_traces(fig, "ice")[0])
    np.testing.assert_allclose(lines.mean(axis=0), _traces(fig, "pd")[0].y, rtol=1e-12)


def test_one_panel_per_class_or_the_class_chosen(classification):
    forest, X = classification
    r = partial_dependence(forest, X, "B", kind="both", feature_names=NAMES,
                           grid_resolution=8, max_ice_lines=10)
    assert r.outputs == (0, 1, 2)
    fig = make_pd_figure(r)
    pds = _traces(fig, "pd")
    assert len(pds) == 3 and len(_traces(fig, "ice")) == 3
    for k, t in enumerate(pds):
        np.testing.assert_array_equal(t.y, r.average[k])
        assert f"P(class {r.outputs[k]})" in t.hovertemplate
    assert [a.text for a in fig.layout.annotations] == ["class 0", "class 1", "class 2"]
    assert len({t.xaxis for t in pds}) == 3                               # three panels
    one = make_pd_figure(r, outputs=2)
    (t,) = _traces(one, "pd")
    np.testing.assert_array_equal(t.y, r.average[2])
    assert list(one.layout.yaxis.range) == [-0.02, 1.02]                  # probabilities
    with pytest.raises(ValueError, match="not one of the outputs"):
        make_pd_figure(r, outputs=7)


def test_no_ice_trace_without_ice_lines(regression):
    forest, X = regression
    r = partial_dependence(forest, X, "A", feature_names=NAMES, grid_resolution=5)
    fig = make_pd_figure(r)
    assert not _traces(fig, "ice") and len(_traces(fig, "pd")) == 1


def test_pd2_heatmap_is_the_cores_surface(classification):
    forest, X = classification
    r = partial_dependence(forest, X, ("A", "B"), feature_names=NAMES, grid_resolution=6)
    fig = make_pd2_figure(r)
    hm = _traces(fig, "pd2")[0]
    np.testing.assert_array_equal(hm.x, r.grid[0])
    np.testing.assert_array_equal(hm.y, r.grid[1])
    # default output: the last class; rows of z follow the y axis (second feature)
    np.testing.assert_array_equal(np.asarray(hm.z).T, r.average[-1])
    assert fig.layout.xaxis.title.text == "A" and fig.layout.yaxis.title.text == "B"
    chosen = make_pd2_figure(r, output=0)
    np.testing.assert_array_equal(np.asarray(chosen.data[0].z).T, r.average[0])
    with pytest.raises(ValueError, match="pair"):
        make_pd2_figure(partial_dependence(forest, X, "A", feature_names=NAMES,
                                           grid_resolution=4))
    with pytest.raises(ValueError, match="1-D"):
        make_pd_figure(r)


def test_dependence_over_responses_regression_points(regression):
    forest, X = regression
    local = local_importance(forest, X, variables=NAMES)
    r = dependence_over_responses(local, "A", positions=[1, 2])
    fig = make_dependence_over_responses(r)
    (pts,) = _traces(fig, "points")
    np.testing.assert_array_equal(pts.x, r.value)
    np.testing.assert_array_equal(pts.y, r.prediction)
    custom = np.asarray(pts.customdata)
    np.testing.assert_array_equal(custom[:, 0], r.observation)
    np.testing.assert_array_equal(custom[:, 1], r.position)
    title = fig.layout.title.text
    assert "not Friedman's partial dependence" in title
    # The subtitle is broken into lines of at most 70 characters (one of 110 ran past the
    # figure's edge in presentation mode); its words are kept, in order.
    lines = fig.layout.title.subtitle.text.split("<br>")
    assert len(lines) >= 2 and max(len(line) for line in lines) <= 70
    subtitle = " ".join(lines)
    assert "nothing is set or averaged" in subtitle
    assert f"{len(r.value):,} of {r.n_observations:,}" in subtitle


def test_dependence_over_responses_classification_boxes(classification):
    forest, X = classification
    local = local_importance(forest, X, variables=NAMES)
    r = dependence_over_responses(local, "A", positions="all")
    fig = make_dependence_over_responses(r, classes=local.classes)
    boxes = _traces(fig, "points")
    assert [b.name for b in boxes] == [str(c) for c in local.classes
                                       if np.any(r.prediction == c)]
    for b in boxes:
        np.testing.assert_array_equal(b.x, r.value[r.prediction == int(b.name)])
        assert b.boxpoints == "all"
    assert sum(len(b.x) for b in boxes) == len(r.value)
    assert "not Friedman's partial dependence" in fig.layout.title.text


def test_pd2_of_a_few_values_ticks_those_values(classification):
    """A pair of bits drew ticks at -0.5 and 1.5, the cells' edges, where the two axes' first
    labels met at the corner; a grid of at most 10 values is ticked at its values."""
    forest, X = classification
    Xd = (X > 0.5).astype(float)
    r = partial_dependence(forest, Xd, ["A", "B"], feature_names=NAMES)
    fig = make_pd2_figure(r)
    assert list(fig.layout.xaxis.tickvals) == [0.0, 1.0]
    assert list(fig.layout.yaxis.tickvals) == [0.0, 1.0]
    fine = make_pd2_figure(partial_dependence(forest, X, ["A", "B"], feature_names=NAMES))
    assert fine.layout.xaxis.tickvals is None


def test_integer_grids_get_whole_number_ticks():
    """Issue #26: a Year axis read "2,012.5"; its ticks are whole years, no separator."""
    from varimp_core.plots.dependence import integer_ticks

    assert integer_ticks([2010.0, 2011.0, 2012.0, 2013.0]) == [2010, 2011, 2012, 2013]
    assert integer_ticks(np.arange(1990.0, 2021.0)) == list(range(1990, 2021, 4))
    assert integer_ticks([0.5, 1.0, 2.0]) is None and integer_ticks([3.0]) is None
