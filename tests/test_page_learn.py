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
    assert len(presets) >= 8 and len(formulas) >= 7
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


def _demo(words: str) -> str:
    (text,) = [t for title, t, _ in _learn().PRESETS if words in title]
    return text


def test_demo_sentences_say_what_theory_and_the_papers_say():
    import math

    from _tables import TABLE2, led_table, rows_of, xor_table
    from oracle import enumerate_trees, eqn3_bruteforce

    text = _demo("Table 2")
    assert f"log2 10 = {math.log2(10):.2f} bits" in text
    gain, lose = (lambda d: ([f"X{j + 1}" for j in range(7) if d[j] > 0.05],
                             [f"X{j + 1}" for j in range(7) if d[j] < -0.05]))(
        [b - a for a, b in zip(TABLE2[1], TABLE2[7])])
    assert f"{' and '.join(gain)} gain, {', '.join(lose[:-1])} and {lose[-1]} lose" in text
    assert TABLE2[1][3] > TABLE2[1][2] and TABLE2[7][2] > TABLE2[7][3]
    assert "X3 overtakes X4" in text

    assert eqn3_bruteforce(rows_of(xor_table(2, 2)), 4) == [0.5, 0.5, 0.0, 0.0]
    assert "each bit with 1/2 bit" in _demo("XOR") and "bits get 0" in _demo("XOR")

    # The LED with X5' = X5 flipped with probability 0.1, by hand.
    rows = [(x + (c,), y, w * (0.9 if c == x[4] else 0.1))
            for x, y, w in rows_of(led_table()) for c in (0, 1)]
    k1, k8 = eqn3_bruteforce(rows, 8), enumerate_trees(rows, 8, 8)
    alone = eqn3_bruteforce(rows_of(led_table()), 7)[4]
    assert abs(k8[7]) < 1e-12
    assert (f"X5 keeps {k1[4]:.3f} bits and X5' gets {k1[7]:.3f} (X5 alone has {alone:.3f})"
            f". As K grows") in _demo("noisy copy")
    assert f"at K=8 X5 has {k8[4]:.3f} bits and X5' 0, last in the order" in _demo("noisy copy")

    # SYM, Sutera (2013) eqs 3.26-3.30: I(Xi; Y) = 1 - H(1/4), I(X1; Y | X2) = H(1/4) - 1/2.
    h = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    text = _demo("SYM")
    assert f"I(Xi; Y) = {1 - h:.4f} bits" in text and f"I(X1; Y | X2) = {h - 0.5:.4f}" in text
    assert f"I(X1, X2; Y) = {1 - h + h - 0.5:g} bits" in text
    assert f"each gets ({1 - h:.4f} + {h - 0.5:.4f}) / 2 = {0.5 / 2:g} bits: " \
           f"{(1 - h) / 2:.4f} at degree 0 and {(h - 0.5) / 2:.4f} at degree 1" in text
    assert "0.1887" in text and "0.3113" in text          # the thesis' printed values

    # Extra-Trees on gauss: the 1/sqrt(T) law of i.i.d. trees, and the Theorem 2 analogue
    # (fully grown, distinct rows: the exact values sum to the plug-in I(X;Y)).
    text = _demo("Extra-Trees on two continuous")
    assert f"\u221a10 = {math.sqrt(10):.1f} times closer than 10, and 1,000 another " \
           f"{math.sqrt(1000 / 100):.1f} times" in text
    from varimp_core.api import compute_importances, load_data
    from varimp_core.exact.binary import plugin_information

    data = load_data(problem="gauss")
    assert data.n_samples == 30 and "30 rows" in text
    exact = compute_importances(data, method="exact-et", max_features=1)
    assert exact.total == pytest.approx(plugin_information(data.X_numeric, data.y), abs=1e-12)


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
