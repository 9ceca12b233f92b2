"""Masking figures: every drawn number is the core's number, colours and axes as promised."""

import numpy as np
import pytest

from _tables import led_table, with_irrelevant, xor_table
from varimp_core.studies.masking import (importance_change, importance_vs_depth, importance_vs_k,
                                         sampled_vs_k)
from varimp_core.plots.masking import (ERROR_BAR_SE, make_delta_heatmap, make_k_lines,
                                       make_rank_bump)
from varimp_core.plots.style import variable_color


@pytest.fixture(scope="module")
def led_k():
    return importance_vs_k(with_irrelevant(led_table(), 1))


@pytest.fixture(scope="module")
def led_sampled():
    return sampled_vs_k(with_irrelevant(led_table(), 1), [1, 3, 8], n_estimators=30)


def _traces(fig, meta):
    return [t for t in fig.data if t.meta == meta]


def test_k_lines_draw_the_exact_values(led_k):
    fig = make_k_lines(led_k)
    exact = _traces(fig, "exact")
    assert [t.name for t in exact] == [f"X{j}" for j in range(1, 9)]
    for i, t in enumerate(exact):
        d = led_k[led_k.variable == t.name].sort_values("K")
        np.testing.assert_array_equal(t.x, d.K.to_numpy())
        np.testing.assert_array_equal(t.y, d.importance.to_numpy())
        np.testing.assert_array_equal(np.asarray(t.customdata)[:, 0], d["rank"].to_numpy())
        assert t.line.color == variable_color(i)
        assert t.mode == "lines+markers"
        assert "bits" in t.hovertemplate and "exact" in t.hovertemplate
    assert "bits" in fig.layout.yaxis.title.text
    assert fig.layout.xaxis.title.text.startswith("K")
    assert list(fig.layout.xaxis.tickvals) == list(range(1, 9))
    assert not _traces(fig, "sampled")


def test_k_lines_overlay_sampled_points_with_error_bars(led_k, led_sampled):
    fig = make_k_lines(led_k, led_sampled)
    sampled = _traces(fig, "sampled")
    assert len(sampled) == 8
    for t in sampled:
        v = t.name.split(" ")[0]
        d = led_sampled[led_sampled.variable == v].sort_values("K")
        np.testing.assert_array_equal(t.x, d.K.to_numpy())
        np.testing.assert_array_equal(t.y, d.importance.to_numpy())
        np.testing.assert_allclose(t.error_y.array, ERROR_BAR_SE * d.se.to_numpy())
        assert t.mode == "markers" and "open" in t.marker.symbol   # not a line: sampled
        assert t.marker.color == next(e.line.color for e in _traces(fig, "exact") if e.name == v)
        assert "sampled" in t.hovertemplate
    # one legend key each for "exact" and "sampled"
    assert len(_traces(fig, "legend")) == 2


def test_k_lines_against_depth():
    df = importance_vs_depth(xor_table(2, 1))
    fig = make_k_lines(df)
    assert "depth" in fig.layout.xaxis.title.text
    x1 = _traces(fig, "exact")[0]
    # Proposition 6 on XOR + 1 irrelevant bit: 0, 1/6, 1/2 (see test_masking)
    np.testing.assert_allclose(x1.y, [0.0, 1 / 6, 1 / 2], atol=1e-12)
    assert "D = " in x1.hovertemplate


def test_rank_bump_puts_rank_one_on_top(led_k):
    fig = make_rank_bump(led_k)
    assert [t.name for t in fig.data] == [f"X{j}" for j in range(1, 9)]
    for t in fig.data:
        d = led_k[led_k.variable == t.name].sort_values("K")
        np.testing.assert_array_equal(t.y, d["rank"].to_numpy())
        np.testing.assert_array_equal(np.asarray(t.customdata)[:, 0], d.importance.to_numpy())
    lo, hi = fig.layout.yaxis.range
    assert lo > hi and hi < 1 < lo          # reversed: rank 1 at the top
    x5 = next(t for t in fig.data if t.name == "X5")
    assert x5.y[-1] == 1.0                  # Table 2: X5 first at K = p
    # end labels name the lines instead of a legend; tied variables share one label
    assert fig.layout.showlegend is False
    labels = [a.text for a in fig.layout.annotations]
    assert "X5" in labels and len(labels) == len(set(led_k[led_k.K == 8]["rank"]))


def test_rank_bump_shares_one_label_for_ties():
    fig = make_rank_bump(importance_vs_k(xor_table(2, 2), [1, 4]))
    assert sorted(a.text for a in fig.layout.annotations) == ["X1, X2", "X3, X4"]


def test_delta_heatmap_is_imp_k_minus_imp_1(led_k):
    fig = make_delta_heatmap(importance_change(led_k))
    (h,) = fig.data
    changed = importance_change(led_k)
    assert list(h.y) == [f"X{j}" for j in range(1, 9)]
    assert list(h.x) == list(range(1, 9))
    z = np.asarray(h.z)
    for i, v in enumerate(h.y):
        for j, k in enumerate(h.x):
            row = changed[(changed.variable == v) & (changed.K == k)].iloc[0]
            assert z[i, j] == row.change
            assert np.asarray(h.customdata)[i, j, 0] == row.importance
    np.testing.assert_allclose(z[:, 0], 0.0)           # K = 1 against itself
    assert h.zmid == 0 and h.zmin == -h.zmax           # diverging, centred at 0
    assert h.zmax == pytest.approx(np.abs(z).max())
    assert fig.layout.yaxis.autorange == "reversed"    # X1 on top
    assert "bits" in h.colorbar.title.text


def test_delta_heatmap_against_depth_and_reference():
    df = importance_vs_depth(led_table())
    fig = make_delta_heatmap(importance_change(df, reference=7))
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z[:, -1], 0.0)
    assert (z[:, 0] <= 0).all()              # K = 1 terms are >= 0: pruning only removes
    assert "D = 7" in fig.data[0].hovertemplate or "D=7" in fig.data[0].hovertemplate


def test_bad_tables_raise_sentences():
    import pandas as pd

    with pytest.raises(ValueError, match="'K' or a 'depth'"):
        make_k_lines(pd.DataFrame({"variable": ["a"], "importance": [1.0]}))
    with pytest.raises(ValueError, match="no column"):
        make_rank_bump(importance_vs_k(led_table(), [1]), x="depth")


def test_tied_lines_stay_visible():
    # XOR + 2 irrelevant bits: X1 = X2 and X3 = X4 at every K; the earlier of each pair is
    # drawn wider so the later one on top does not hide it. Untied lines keep one width.
    fig = make_k_lines(importance_vs_k(xor_table(2, 2)))
    widths = {t.name: t.line.width for t in fig.data}
    assert widths["X1"] > widths["X2"] and widths["X3"] > widths["X4"]
    assert widths["X2"] == widths["X4"]
    led = make_k_lines(importance_vs_k(led_table()))
    assert len({t.line.width for t in led.data}) == 1
