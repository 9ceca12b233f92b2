"""Text that comes from users is text: no figure turns a name into a link (issue #17 item 6).

Plotly draws a subset of HTML in every text of a figure.  An uploaded column
named ``<a href="https://…">…</a>`` (or such a class label, or file name) was a
live link on 6 of 8 pages, for anyone opening a shared link.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from _pages import upload_frame
from plotly.utils import PlotlyJSONEncoder
from sklearn.ensemble import RandomForestClassifier

from varimp_core.api import compute_importances, load_data
from varimp_core.local.importance import local_importance
from varimp_core.local.interactions import interaction_importance, interactions
from varimp_core.local.partial_dependence import partial_dependence
from varimp_core.measures.suite import compute_measures
from varimp_core.plots.convergence import make_convergence_figure
from varimp_core.plots.decomposition import make_degree_heatmap
from varimp_core.plots.dependence import make_pd_figure
from varimp_core.plots.importances import make_importance_figure, make_theorem2_figure
from varimp_core.plots.interactions import make_mosaic, make_vii_bars
from varimp_core.plots.measures import make_measures_figure
from varimp_core.studies.convergence import convergence_curve
from varimp_core.plots.style import plain_text

from pages._framework.datachoice import DataChoice
from pages._server.jobs import Progress
from pages._framework.params import Context

LINK = '<a href="https://evil.example/x">{}</a>'
ANCHOR = re.compile(r"<\s*/?\s*a[\s>]", re.IGNORECASE)


def _evil_frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2 = rng.integers(0, 2, n), rng.integers(0, 3, n)
    y = np.where((x1 ^ (x2 > 0)) == 1, LINK.format("yes"), "no")
    return pd.DataFrame({LINK.format("X1"): x1, LINK.format("X2"): x2, "y": y})


def _anchors(*figures) -> list[str]:
    """Every anchor tag Plotly would draw: the figures' JSON with its escapes undone."""
    text = json.dumps(list(figures), cls=PlotlyJSONEncoder)
    text = text.encode().decode("unicode_escape")
    return ANCHOR.findall(text)


def test_plain_text_keeps_our_tags_and_writes_any_other_as_text():
    assert plain_text("<b>X1</b><br>bits") == "<b>X1</b><br>bits"
    assert plain_text(LINK.format("X1")) == '&lt;a href="https://evil.example/x">X1&lt;/a>'
    assert plain_text("<span style='font-size:90px'>x") == "&lt;span style='font-size:90px'>x"
    assert plain_text("a < b") == "a &lt; b" and plain_text("no tags") == "no tags"


def _core_results(df: pd.DataFrame):
    """What the core's figures draw, from a table with target ``y``: exact and sampled
    importances, measures, local importances and a partial dependence (seeded)."""
    prepared = load_data(data=df, target="y")
    exact = compute_importances(prepared, method="exact", max_features=1)
    sampled = compute_importances(prepared, method="sklearn-rf", max_features=1,
                                  n_estimators=20, random_state=0)
    X, y = prepared.X_numeric, prepared.y
    variables = list(prepared.variables)
    measures = compute_measures(X, y, measures=("mdi", "mdi_oob"), n_estimators=20,
                                variables=variables)
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    local = local_importance(forest, X, variables=variables)
    pd_result = partial_dependence(forest, X, [0], feature_names=variables)
    return exact, sampled, measures, local, pd_result


def test_no_figure_of_the_core_draws_a_users_link():
    exact, sampled, measures, local, pd_result = _core_results(_evil_frame())
    figures = [make_importance_figure(sampled, exact), make_theorem2_figure(exact),
               make_degree_heatmap(exact), make_measures_figure(measures, exact),
               make_mosaic(interactions(local, min_share=0)),
               make_vii_bars(interaction_importance(local)), make_pd_figure(pd_result),
               make_convergence_figure(convergence_curve(sampled, exact),
                                       label=LINK.format("forest")),
               make_convergence_figure(None, note=LINK.format("why"))]
    assert _anchors(*figures) == []
    # the names are still there, as text
    assert "&lt;a href" in json.dumps(figures[0], cls=PlotlyJSONEncoder).encode().decode(
        "unicode_escape")


@pytest.fixture(scope="module")
def importances_page(app_module):
    import pages.importances as module

    return module


def test_an_uploaded_link_is_text_on_the_importances_page(importances_page):
    """The page's own drawing, from an upload named like a link, with a link as a class."""
    page = importances_page
    data = DataChoice.from_params(upload_frame(_evil_frame(), LINK.format("f") + ".csv"))
    controls = {"method": "exact", "max_features": 1, "max_depth": None}
    settings = page.PARAMS.settings({**page.PARAMS.defaults(), **controls}, Context(p=2))
    out = page.compute(settings, data, Progress(None))
    drawn = page.VIEW.draw(out, settings, data, {})
    figures = [o for o in drawn if hasattr(o, "to_plotly_json")]
    assert figures and _anchors(*figures) == []


def test_a_figure_note_is_wrapped_to_fit_the_figure():
    """Plotly never wraps an annotation: the Importances page's 'how many trees' note ran past
    both edges of its figure.  Every line is at most NOTE_WIDTH characters and the words are
    the note's words, in order."""
    from varimp_core.plots.style import NOTE_WIDTH, empty_figure
    from pages._framework.common import placeholder_figure

    note = ("This curve needs a sampled forest and the exact value it converges to; choose a "
            "sampled method on data where the exact value can be afforded.")
    for fig in (empty_figure(note, 300), placeholder_figure(note)):
        lines = fig.layout.annotations[0].text.split("<br>")
        assert len(lines) == 3 and all(len(line) <= NOTE_WIDTH for line in lines)
        assert " ".join(lines).split() == note.split()


# A name written in our own tags: it was drawn bold and in italics (issue #27, item 8), since
# the figure pass kept every tag of ours.  The entities are typed by hand, not computed.
BOLD, MIXED, CLASS = "<b>X1</b>", "R&D <i>2</i>", "<b>yes</b>"
TYPED = {BOLD: "&lt;b&gt;X1&lt;/b&gt;", MIXED: "R&amp;D &lt;i&gt;2&lt;/i&gt;",
         CLASS: "&lt;b&gt;yes&lt;/b&gt;"}


def _tagged_frame(n: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.integers(0, 2, n), rng.integers(0, 3, n), rng.integers(0, 2, n)
    y = np.where((x1 ^ (x2 > 0)) == 1, CLASS, "no")
    return pd.DataFrame({BOLD: x1, MIXED: x2, "plain": x3, "y": y})


def _shown(*figures) -> str:
    return json.dumps(list(figures), cls=PlotlyJSONEncoder).encode().decode("unicode_escape")


def test_a_name_written_in_our_tags_is_shown_as_typed_in_every_figure():
    exact, sampled, measures, local, pd_result = _core_results(_tagged_frame())
    figures = {"importances": make_importance_figure(sampled, exact),
               "theorem 2": make_theorem2_figure(exact),
               "degrees": make_degree_heatmap(exact),
               "measures": make_measures_figure(measures, exact),
               "mosaic": make_mosaic(interactions(local, min_share=0)),
               "mosaic, narrow": make_mosaic(interactions(local, min_share=0), height=200),
               "vii": make_vii_bars(interaction_importance(local)),
               "pd": make_pd_figure(pd_result)}
    for what, fig in figures.items():
        text = _shown(fig)
        for name in (BOLD, MIXED):
            assert name not in text, (what, name)
        assert not re.search(r"<b>X1|<i>2|<b>ye", text), what    # nor cut short
        assert TYPED[BOLD] in text, what
    assert TYPED[MIXED] in _shown(figures["importances"])
    # our own markup stays: the hover's name is bold, a legend's line break is a break
    assert figures["importances"].data[0].hovertemplate.startswith("<b>%{x}</b><br>")
    assert list(figures["importances"].data[0].x) == [TYPED[BOLD], TYPED[MIXED], "plain"]
    # the narrow mosaic's tiles cut the names short: the cut names are text too
    cut = [t for trace in figures["mosaic, narrow"].data for t in (trace.text or ())
           if t.endswith("\u2026")]
    assert cut and all("<" not in t for t in cut), cut


def test_a_click_on_a_tagged_name_reads_the_name_back(app_module):
    """Decomposition reads the clicked cell's variable from the heatmap: the name as the
    file has it, not as the figure writes it."""
    from pages.decomposition import cell_from_click
    from varimp_core.plots.decomposition import make_degree_pair

    prepared = load_data(data=_tagged_frame(), target="y")
    k1 = compute_importances(prepared, method="exact", max_features=1)
    k3 = compute_importances(prepared, method="exact", max_features=3)
    figure = json.loads(json.dumps(make_degree_pair(k1, k3), cls=PlotlyJSONEncoder))
    assert list(figure["data"][0]["y"]) == [TYPED[BOLD], TYPED[MIXED], "plain"]
    click = {"points": [{"x": 0, "y": TYPED[MIXED], "curveNumber": 1}]}
    assert cell_from_click(click, figure) == {"var": MIXED, "degree": 0, "panel": "K"}
    click = {"points": [{"x": 1, "y": TYPED[BOLD], "curveNumber": 0}]}
    assert cell_from_click(click, figure)["var"] == BOLD


def test_a_tagged_name_is_text_on_the_importances_page(importances_page):
    page = importances_page
    data = DataChoice.from_params(upload_frame(_tagged_frame(), "tags.csv"))
    controls = {"method": "exact", "max_features": 1, "max_depth": None}
    settings = page.PARAMS.settings({**page.PARAMS.defaults(), **controls}, Context(p=3))
    out = page.compute(settings, data, Progress(None))
    figures = [o for o in page.VIEW.draw(out, settings, data, {}) if hasattr(o, "to_plotly_json")]
    text = _shown(*figures)
    assert figures and BOLD not in text and MIXED not in text and TYPED[BOLD] in text


def test_a_sentence_in_place_of_a_figure_shows_a_tagged_name_as_typed():
    from pages._framework.common import placeholder_figure

    text = placeholder_figure(f"This data has no input {BOLD!r}.").layout.annotations[0].text
    assert "&lt;b&gt;X1&lt;/b&gt;" in text and "<b>" not in text
