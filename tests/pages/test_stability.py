"""Finite forests page (issue #29): the swap heatmap and the trees of the infinite forest.

Hand values: Louppe's toy (thesis, section 7.2.3; see ``test_plots_stability``) has four
extra-trees at K = 1 with probabilities 1/8, 1/8, 1/4 and 1/2; XOR on 4 rows has two
multiway trees at K = 1 (the root splits on X1 or X2, 1/2 each, and its children must then
split on the other bit), each with importances (0, 1) or (1, 0) bits.
"""

from __future__ import annotations

import math
from urllib.parse import parse_qs

import numpy as np
import pytest
from _browser import open_page, set_number, wait_for
from _pages import page_module

from pages._framework.datachoice import DataChoice

H = math.log2(3) - 2 / 3


@pytest.fixture(scope="module")
def page(app_module):
    return page_module("stability")


def _run(page, query, **values):
    data, _ = DataChoice.from_page(query)
    return page.VIEW.run({**page.PARAMS.defaults(), **values}, data.to_store())


def _probabilities(cards):
    return sorted(c.children[0].children[1].children for c in cards)


def test_louppes_toy_preset_has_four_trees(page):
    link = dict(page.PRESETS)["Louppe's toy, extra-trees, K = 1 (four trees)"]
    query = {k: v[-1] for k, v in parse_qs(link.split("?", 1)[1]).items()}
    out, settings, data = _run(page, query, method=query["method"], max_features=query["K"])
    flip, texts, note, mean_fig, cards = page.render(out, settings, data)
    assert _probabilities(cards) == ["1/2", "1/4", "1/8", "1/8"]
    assert note.startswith("4 distinct trees")
    np.testing.assert_allclose(mean_fig.data[0].y, mean_fig.data[1].y, atol=1e-12)
    np.testing.assert_allclose(mean_fig.data[1].y, [3 / 8 * H + (H - 2 / 3) / 8, H / 2 + 1 / 12],
                               atol=1e-12)
    assert "0.3758" in page.THESIS_NOTE and "0.375 " in page.THESIS_NOTE


def test_the_multiway_toy_gives_each_input_half_of_h(page):
    out, settings, data = _run(page, {"problem": "toy"}, method="exact", max_features=1)
    *_, mean_fig, cards = page.render(out, settings, data)
    np.testing.assert_allclose(mean_fig.data[0].y, [H / 2, H / 2], atol=1e-12)


def test_xor_on_four_rows_has_two_trees(page):
    out, settings, data = _run(page, {"problem": "xor"}, method="exact", max_features=1)
    *_, cards = page.render(out, settings, data)
    assert _probabilities(cards) == ["1/2", "1/2"]
    texts = sorted(c.children[2].children for c in cards)
    assert texts == ["X1\u00a00.0000 \u00b7 X2\u00a01.0000 bits",
                     "X1\u00a01.0000 \u00b7 X2\u00a00.0000 bits"]


def test_led_beyond_the_limit_gives_the_count_in_a_sentence(page):
    out, settings, data = _run(page, {"problem": "led"}, method="exact", max_features=1)
    _, _, note, _, cards = page.render(out, settings, data)
    assert cards == [] and "distinct trees here, more than the 64" in note
    count = int(note.split(" has ")[1].split(" distinct")[0].replace(",", ""))
    assert count > 64


def test_t_changes_only_the_drawing(page):
    data, _ = DataChoice.from_page({"problem": "toy"})
    base = {**page.PARAMS.defaults(), "method": "exact-et"}
    keys = {page.VIEW.key(data, page.PARAMS.settings({**base, "n_trees": t}, page.context_for(
        data)), {}) for t in (None, 5, 5000)}
    assert len(keys) == 1
    out, settings, data = _run(page, {"problem": "toy"}, method="exact-et", n_trees=5)
    flip_5 = page.render(out, settings, data)[0].data[0].z[0][1]
    out, settings, data = _run(page, {"problem": "toy"}, method="exact-et", n_trees=500)
    flip_500 = page.render(out, settings, data)[0].data[0].z[0][1]
    assert 0 < flip_500 < flip_5 < 0.5


def test_a_sampled_forest_is_labelled_an_estimate(page):
    out, settings, data = _run(page, {"problem": "toy"}, method="sklearn-et",
                               n_estimators=200)
    flip, texts, note, _, cards = page.render(out, settings, data)
    assert "estimate from 200 trees" in [a.text for a in flip.layout.annotations]
    assert texts[0].children.startswith("An estimate")
    assert cards == [] and "exact methods" in note


@pytest.mark.parametrize("bad", [0, -3, 2.5, 10**10])
def test_a_bad_t_is_a_sentence_beside_its_control(page, bad):
    data, _ = DataChoice.from_page({"problem": "toy"})
    _, errors = page.PARAMS.validate({**page.PARAMS.defaults(), "n_trees": bad},
                                     page.context_for(data))
    assert set(errors) == {"n_trees"} and errors["n_trees"].startswith("T must be a whole number")


@pytest.mark.browser
def test_stability_page_renders_the_toy_preset(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/stability?problem=toy&method=exact-et&K=1")
    probs = wait_for(lambda: sorted(e.text for e in dash_duo.find_elements(".stab-tree-prob"))
                     or None, 60, "the tree gallery")
    assert probs == ["1/2", "1/4", "1/8", "1/8"]
    heat = wait_for(lambda: dash_duo.driver.execute_script(
        "const g = document.querySelector('#stab-flip-graph .js-plotly-plot');"
        "return g && g.data && g.data[0].type === 'heatmap' && g.data[0].z;"), 30, "the heatmap")
    assert heat[0][1] == pytest.approx(heat[1][0]) and 0 < heat[0][1] < 0.5
    trees = dash_duo.driver.execute_script(
        "return document.querySelectorAll('.stab-tree .js-plotly-plot').length;")
    assert trees == 4
    # T is a control: a larger forest swaps the two less often, without a new job
    set_number(dash_duo, "#stab-t", 1000)
    wait_for(lambda: dash_duo.driver.execute_script(
        "const g = document.querySelector('#stab-flip-graph .js-plotly-plot');"
        "return g.data[0].z[0][1];") < heat[0][1], 30, "the heatmap at T = 1000")
    assert [e.text for e in dash_duo.find_elements(".vi-error")] == []
    assert dash_duo.get_logs() == []


def test_exact_moments_on_a_sample_say_they_are_the_samples(page):
    """A drawn sample's exact law is that of trees grown on its rows: the page says so and
    points to the verdicts; the exact distribution's page does not."""
    out, settings, data = _run(page, {"problem": "xor", "sampling": "sample", "n": "200"},
                               method="exact", max_features=1)
    text = " ".join(p.children for p in page.render(out, settings, data)[1])
    assert "law of trees grown on these rows" in text and "verdict" in text
    out, settings, data = _run(page, {"problem": "xor"}, method="exact", max_features=1)
    text = " ".join(p.children for p in page.render(out, settings, data)[1])
    assert "these rows" not in text
