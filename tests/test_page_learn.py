"""The Learn page: formulas render with MathJax, and every preset link opens a page cleanly."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from _browser import open_page, visit, wait_for

from pages._ui import datasource


def _walk(component):
    yield component
    children = getattr(component, "children", None)
    if children is None or isinstance(children, str):
        return
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if hasattr(child, "to_plotly_json"):
            yield from _walk(child)


def _learn():
    """The page module, as Dash loaded it (importing it before the app raises PageError)."""
    import sys

    import app  # noqa: F401  (registers the pages)

    return sys.modules["pages.learn"]


def _links(kind: str) -> list[str]:
    return [c.href for c in _walk(_learn().layout())
            if f"learn-{kind}-link" in (getattr(c, "className", "") or "")]


def _framework(param_set):
    """Keys and notes of a page on the framework: the data keys and its ParamSet."""
    from pages._ui.datachoice import DataChoice
    from pages._ui.params import Context

    def check(query):
        data, notes = DataChoice.from_page(query)
        _, more = param_set.from_url(query, Context(p=data.n_features()))
        keys = {p.name for p in datasource.DATA_PARAMS} | {p.url_key for p in param_set}
        return keys, notes + more

    return check


def _masking(query):
    """Keys and notes of the Masking page, whose problem is its own control."""
    import pages.masking as masking

    return ({p.url_key for p in (*masking.PARAMS, *masking.SAMPLED)},
            masking.initial_values(query)[1])


def _page_params():
    import pages.decomposition as decomposition
    import pages.importances as importances

    return {"/importances": _framework(importances.PARAMS),
            "/decomposition": _framework(decomposition.PARAMS),
            "/masking": _masking}


def test_page_is_registered(dash_app):
    import dash

    page = next(p for p in dash.page_registry.values() if p["module"] == "pages.learn")
    assert (page["path"], page["name"], page["order"]) == ("/learn", "Learn", 9)


def test_every_link_points_to_a_registered_page_with_parameters_it_understands(dash_app):
    import dash

    paths = {p["path"] for p in dash.page_registry.values()}
    presets, formulas = _links("preset"), _links("formula")
    assert len(presets) >= 5 and len(formulas) >= 7
    params = _page_params()
    for href in presets + formulas:
        url = urlsplit(href)
        assert url.path in paths, href
        query = parse_qs(url.query, keep_blank_values=True)
        known, notes = params[url.path](query)
        assert set(query) <= known, (href, set(query) - known)
        assert notes == [], (href, notes)


def test_presets_carry_their_data_choice():
    # A shared preset must not depend on the visitor's session: each names its problem.
    for href in _links("preset"):
        assert "problem=" in href, href


def test_formulas_are_tex_with_display_math():
    formulas = _learn().FORMULAS
    for title, text, _ in formulas:
        assert text.count("$$") >= 2 and text.count("$$") % 2 == 0, title
    titles = " ".join(t for t, _, _ in formulas)
    for needed in ("MDI", "Eqn 3", "Theorem 2", "Proposition 6", "Shapley", "Masking",
                   "semantics"):
        assert needed in titles


# -- in the browser ----------------------------------------------------------------------
_SETTLED = ("return document.querySelectorAll('.vi-job-running').length === 0 && "
            "document.querySelectorAll('.js-plotly-plot').length > 0 && "
            "!document.querySelector('._dash-loading');")
_VISIBLE_TEXT = ("return Array.from(document.querySelectorAll(arguments[0]))"
                 ".filter(e => e.offsetParent !== null && e.innerText.trim())"
                 ".map(e => e.innerText.trim());")


@pytest.mark.browser
def test_learn_renders_mathjax_and_every_preset_opens_cleanly(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/learn")
    dash_duo.wait_for_element("mjx-container", timeout=30)
    n_math = len(dash_duo.driver.find_elements("css selector", "mjx-container"))
    assert n_math >= 7
    hrefs = [a.get_attribute("href") for a in
             dash_duo.driver.find_elements("css selector", "a.learn-preset-link")]
    assert len(hrefs) >= 5
    assert dash_duo.get_logs() == []

    for href in hrefs:
        dash_duo.driver.get(href)
        dash_duo.wait_for_element("h1.vi-page-title", timeout=30)
        wait_for(lambda: dash_duo.driver.execute_script(_SETTLED), timeout=90,
                 what=f"{href} to settle")
        time.sleep(0.5)
        errors = dash_duo.driver.execute_script(_VISIBLE_TEXT, ".vi-error, .vi-notes")
        assert errors == [], (href, errors)
        assert dash_duo.get_logs() == [], href

    # a click on a preset navigates inside the app
    visit(dash_duo, "/learn")
    dash_duo.wait_for_element("#learn-preset-2-0", timeout=20).click()
    dash_duo.wait_for_element("#masking-lines", timeout=20)
    assert urlsplit(dash_duo.driver.current_url).path == "/masking"
    assert dash_duo.get_logs() == []
