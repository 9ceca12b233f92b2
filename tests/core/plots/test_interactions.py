"""Interaction figures: every drawn number is the core's number; the mosaic's geometry adds up."""

import numpy as np
import pytest
from _browser import draw_static

from varimp_core.local.interactions import (OTHER_FEATURES, importance_over_labels,
                                            interaction_importance, interactions,
                                            partial_importance)
from varimp_core.local.importance import fit_uniform_forest, local_importance
from varimp_core.plots.interactions import (OTHER_COLOR, make_importance_over_labels,
                                            make_mosaic, make_partial_importance_figure,
                                            fit_label, make_vii_bars, mosaic_geometry)
from varimp_core.plots.style import unescape_text, variable_color
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest

VARIABLES = ("A", "B", "C", "D", "E")


def _three_classes(n=400, seed=0):
    """Y in {0, 1, 2} from A and B; C, D, E are noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 5))
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.6).astype(int)
    return X, y


@pytest.fixture(scope="module")
def local():
    X, y = _three_classes()
    forest = fit_uniform_forest(X, y, n_estimators=40, random_state=0)
    return local_importance(forest, X, variables=VARIABLES)


@pytest.fixture(scope="module")
def regression_local():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 5))
    y = 3 * X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.normal(size=300)
    forest = fit_sklearn_forest(X, y, kind="rf", task="regression", n_estimators=30,
                                max_features=None)
    return local_importance(forest, X, variables=VARIABLES)


def _tiles(fig):
    return [t for t in fig.data if t.meta == "tile"]


def test_mosaic_widths_sum_to_one_and_equal_first_order_shares(local):
    it = interactions(local, min_share=0)
    assert it.n_pairs == it.n_observations          # every observation has two positions
    fig = make_mosaic(it, variables=VARIABLES)
    widths = np.asarray(_tiles(fig)[0].width)
    cols = np.flatnonzero(it.joint.sum(axis=1) > 0)
    assert widths.sum() == pytest.approx(1.0, abs=1e-12)
    # with a second position for every observation, joint's row sums are SLI_1 / n
    np.testing.assert_allclose(widths, it.first[cols], atol=1e-12)
    for t in _tiles(fig):                            # every trace shares the column layout
        np.testing.assert_array_equal(t.width, widths)
    # columns touch: centres are left edges + half widths, left edges the cumulative sums
    lefts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    np.testing.assert_allclose(_tiles(fig)[0].x, lefts + widths / 2, atol=1e-12)
    assert list(fig.layout.xaxis.ticktext) == [it.labels[r] for r in cols]


def test_mosaic_heights_are_second_order_shares_given_the_first(local):
    it = interactions(local, min_share=0)
    fig = make_mosaic(it, variables=VARIABLES)
    g = mosaic_geometry(it)
    cols = np.flatnonzero(g["widths"] > 0)
    stacked = np.zeros(cols.size)
    for t in _tiles(fig):
        c = it.labels.index(t.name)
        y = np.asarray(t.y, dtype=float)
        np.testing.assert_allclose(y, it.joint[cols, c] / it.joint[cols].sum(axis=1), atol=1e-12)
        # tile area = the joint share; hover data carry the exact numbers
        np.testing.assert_allclose(y * np.asarray(t.width), it.joint[cols, c], atol=1e-12)
        custom = np.asarray(t.customdata, dtype=object)
        assert list(custom[:, 0]) == [it.labels[r] for r in cols]
        assert set(custom[:, 1]) == {t.name}
        np.testing.assert_allclose(custom[:, 2].astype(float), it.joint[cols, c])
        stacked += y
    np.testing.assert_allclose(stacked, 1.0, atol=1e-12)
    counts = sum(np.asarray(t.customdata, dtype=object)[:, 5].astype(int).sum()
                 for t in _tiles(fig))
    assert counts == it.n_pairs                      # every observation in exactly one tile
    assert fig.layout.barmode == "stack"


def test_mosaic_colours_follow_the_data_order_and_others_are_grey(local):
    it = interactions(local, min_share=0.2)          # merge the weak variables
    assert it.labels[-1] == OTHER_FEATURES and it.merged
    fig = make_mosaic(it, variables=VARIABLES)
    for t in _tiles(fig):
        expected = OTHER_COLOR if t.name == OTHER_FEATURES else \
            variable_color(VARIABLES.index(t.name))
        assert t.marker.color == expected


def test_vii_bars_draw_interaction_importance_sorted(local):
    result = interaction_importance(local)
    fig = make_vii_bars(result)
    bar = fig.data[0]
    order = np.lexsort((np.arange(5), -result.importances))
    assert list(bar.y) == [VARIABLES[j] for j in order]
    np.testing.assert_array_equal(bar.x, result.importances[order])
    np.testing.assert_allclose(bar.customdata, result.normalised[order])
    assert bar.marker.color == tuple(variable_color(j) for j in order)
    # Ciss (2015) 4.2: the VII sum over variables is (S1 + S2) / n, 2 when every
    # observation has a variable at positions 1 and 2
    assert np.sum(bar.x) == pytest.approx(2.0, abs=1e-12)


def test_partial_importance_bars_are_the_shares_of_the_class(local):
    label = local.classes[-1]
    result = partial_importance(local, label=label)
    fig = make_partial_importance_figure(result, variables=VARIABLES)
    bar = fig.data[0]
    order = np.lexsort((np.arange(5), -result.scores))
    assert list(bar.y) == [VARIABLES[j] for j in order]
    np.testing.assert_allclose(bar.x, result.shares[order])
    np.testing.assert_array_equal(bar.customdata, result.scores[order])
    assert np.sum(bar.x) == pytest.approx(1.0)
    assert result.subset in fig.layout.title.text
    assert f"{result.n_observations:,} observations" in fig.layout.title.text


def test_partial_importance_of_a_response_range(regression_local):
    result = partial_importance(regression_local, threshold=2.0, direction="above")
    fig = make_partial_importance_figure(result)
    np.testing.assert_allclose(sorted(fig.data[0].x, reverse=True), np.sort(result.shares)[::-1])
    # the subset's text is written with entities (it may hold a class label from a file);
    # Plotly shows it as typed
    assert "prediction > 2" in unescape_text(fig.layout.title.text)
    assert "<" not in fig.layout.title.text.replace("<br>", "")


def test_importance_over_labels_heatmap(local):
    result = importance_over_labels(local)
    fig = make_importance_over_labels(result)
    hm = fig.data[0]
    z = np.asarray(hm.z, dtype=float)
    np.testing.assert_array_equal(z, result.shares[result.order])
    np.testing.assert_allclose(z.sum(axis=0), 1.0)               # each class's shares
    assert list(hm.y) == [VARIABLES[j] for j in result.order]
    assert [x.split(" ")[0] for x in hm.x] == [str(c) for c in result.classes]
    assert all(f"n={n:,}" in x for x, n in zip(hm.x, result.n_per_class))
    assert hm.colorscale[0][1] != hm.colorscale[-1][1]           # a real scale
    # ranks within each class: 1 for the largest share
    ranks = np.asarray(hm.customdata)
    for k in range(len(result.classes)):
        assert ranks[np.argmax(z[:, k]), k] == 1


def test_over_labels_refuses_regression(regression_local):
    with pytest.raises(ValueError, match="classifier"):
        importance_over_labels(regression_local)


# -- shortened labels stay distinct (issue #26: "bil…" twice for bill_length and bill_depth) --
def test_fit_label_keeps_a_prefix_that_no_other_label_shares():
    """At font 10 a character takes 7 px (0.7 em).  bill_length_mm and bill_depth_mm share
    "bill_" (5 characters), so a cut one keeps 6 characters and the ellipsis (7 slots)."""
    pair = ["bill_length_mm", "bill_depth_mm"]
    assert fit_label("bill_length_mm", 49, font=10, others=pair) == "bill_l…"   # 7 slots
    assert fit_label("bill_depth_mm", 49, font=10, others=pair) == "bill_d…"
    assert fit_label("bill_length_mm", 56, font=10, others=pair) == "bill_le…"  # 8 slots
    # 5 slots: "bill…" would name both; nothing is drawn, the hover names it.
    assert fit_label("bill_length_mm", 35, font=10, others=pair) == ""
    # Alone, the same 5 slots keep four characters, as before.
    assert fit_label("bill_length_mm", 35, font=10) == "bill…"
    # A name that fits is whole; "X1" and "X10" stay apart by the ellipsis.
    assert fit_label("X1", 21, font=10, others=["X1", "X10"]) == "X1"
    assert fit_label("X10", 21, font=10, others=["X1", "X10"]) == "X10"
    assert fit_label("X10", 14, font=10, others=["X1", "X10"]) == ""   # "X1" would be X1's
    assert fit_label("X100", 21, font=10, others=["X2", "X200"]) == "X1…"


def test_fit_label_never_gives_two_names_the_same_text_nor_overflows():
    """Random names with long shared starts, each at every width: two different names never
    get the same non-empty text, and no text has more characters than its width holds."""
    rng = np.random.default_rng(0)
    stems = ["bill_", "flipper_", "sepal ", "X", "X1", ""]
    for _ in range(50):
        names = sorted({stems[rng.integers(len(stems))]
                        + "".join(rng.choice(list("abcl_d0"), size=rng.integers(1, 8)))
                        for _ in range(6)})
        for px in range(0, 200, 7):
            texts = {}
            for name in names:
                text = fit_label(name, px, font=10, others=names)
                assert len(text) <= px // 7, (name, px, text)
                assert text == name or text == "" or (text.endswith("…")
                                                       and name.startswith(text[:-1]))
                if text:
                    assert text not in texts, (name, texts.get(text), text)
                    texts[text] = name


def test_mosaic_ticks_tell_bill_length_from_bill_depth():
    """Penguin-like columns 21 % wide: 0.21 x 240 - 4 = 46.4 px, 5 slots of 9.1 px at 13 px.
    The old rule drew "bill…" under both; now neither is drawn (the hover names them), and
    the 29 % columns (65.6 px, 7 slots) keep distinct prefixes."""
    from varimp_core.local.interactions import Interactions

    labels = ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g")
    widths = np.array([0.21, 0.21, 0.29, 0.29])
    joint = np.array([[0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]) / 3.0
    joint = joint * widths[:, None]
    fig = make_mosaic(Interactions(labels=labels, joint=joint, vii=np.zeros((4, 4)),
                                   first=widths, second=joint.sum(axis=0), n_observations=100,
                                   n_pairs=100, merged=(), min_share=0.0))
    ticks = list(fig.layout.xaxis.ticktext)
    assert ticks == ["", "", "flippe…", "body_m…"]
    texts = [t for tile in _tiles(fig) for t in tile.text if t]
    for name in labels:   # a tile's text starts only its own name
        mine = [t for t in texts if name.startswith(t.rstrip("…"))]
        assert all(t.rstrip("…") and not any(o != name and o.startswith(t.rstrip("…"))
                                             for o in labels) for t in mine), mine
    firsts = {row[0] for tile in _tiles(fig) for row in tile.customdata}
    assert firsts == set(labels)   # the hover gives the full names


# -- labels never overlap, measured in the browser --------------------------------------------
def _crowded_interactions():
    """Thirteen first-order columns from 30 % down to 1 %, names from 2 to 25 characters."""
    from varimp_core.local.interactions import Interactions

    labels = ("X2", "petal width (cm)", "a very long variable name", "WWWWWWWWWW", "B",
              "mmmm", "X10", "sepal length (cm)", "X12", "ratio", "X14", "X15", "zz")
    widths = np.array([0.30, 0.16, 0.12, 0.09, 0.07, 0.06, 0.05, 0.04, 0.03, 0.03, 0.02,
                       0.02, 0.01])
    rng = np.random.default_rng(3)
    joint = np.zeros((13, 13))
    for r, w in enumerate(widths):
        shares = rng.dirichlet(np.full(12, 0.4))
        joint[r, [c for c in range(13) if c != r]] = w * shares
    return Interactions(labels=labels, joint=joint, vii=np.zeros((13, 13)), first=widths,
                        second=joint.sum(axis=0), n_observations=1000, n_pairs=1000,
                        merged=(), min_share=0.0)


_BOXES = """
const gd = document.querySelector('.js-plotly-plot');
const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const shown = e => e.textContent && getComputedStyle(e).display !== 'none'
  && getComputedStyle(e).visibility !== 'hidden' && e.getBoundingClientRect().width > 0;
return {ticks: Array.from(gd.querySelectorAll('.xtick text')).filter(shown).map(box),
        tiles: Array.from(gd.querySelectorAll('.point')).map(p => {
          const t = p.querySelector('text');
          return [box(p.querySelector('path')), t && shown(t) ? box(t) : null]; })};
"""


def _meet(a, b) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


@pytest.mark.browser
@pytest.mark.parametrize("width, font", [(None, 13), (1400, 13), (1024, 18)],
                         ids=["narrowest", "1400px", "presentation-1024px"])
def test_mosaic_labels_never_overlap(dash_br, tmp_path, width, font):
    """The narrowest plot the labels are sized for (MOSAIC_MIN_WIDTH), a wide screen, and
    presentation mode's 18 px text: no two axis labels meet, and every tile's text lies
    inside its tile (so no two tile texts meet either)."""
    from varimp_core.plots.interactions import MOSAIC_MIN_WIDTH

    fig = make_mosaic(_crowded_interactions())
    margin = fig.layout.margin
    fig.update_layout(width=width or MOSAIC_MIN_WIDTH + margin.l + margin.r,
                      font=dict(size=font), margin=dict(l=margin.l, r=margin.r))
    fig.update_xaxes(automargin=False, tickfont=dict(size=font))
    draw_static(dash_br, fig, tmp_path, ".js-plotly-plot .xtick")
    shown = dash_br.driver.execute_script(_BOXES)
    ticks, tiles = shown["ticks"], shown["tiles"]
    assert len(ticks) >= 3 and sum(t is not None for _, t in tiles) >= 3   # labels are drawn
    for i, a in enumerate(ticks):
        for b in ticks[i + 1:]:
            assert not _meet(a, b), (a, b)
    for tile, text in tiles:
        if text is not None:
            assert tile[0] - 0.5 <= text[0] and text[2] <= tile[2] + 0.5, (tile, text)
            assert tile[1] - 0.5 <= text[1] and text[3] <= tile[3] + 0.5, (tile, text)
