"""The Learn page: formulas render with MathJax, and every preset link opens a page cleanly."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from _browser import open_page, visit, wait_for

from pages._framework import datasource


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
    from pages._framework.datachoice import DataChoice
    from pages._framework.params import Context

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

    from _tables import TABLE2, TABLE2_EQN3, led_table, rows_of, xor_table
    from oracle import enumerate_trees, eqn3_bruteforce

    text = _demo("Table 2")
    assert f"log2 10 = {math.log2(10):.2f} bits" in text
    gain, lose = (lambda d: ([f"X{j + 1}" for j in range(7) if d[j] > 0.05],
                             [f"X{j + 1}" for j in range(7) if d[j] < -0.05]))(
        [b - a for a, b in zip(TABLE2[1], TABLE2[7])])
    # a little: above Eqn 3 in every sampled column K = 2..7, by less than 0.05 at K = 7
    little = [f"X{j + 1}" for j in range(7) if f"X{j + 1}" not in gain + lose
              and all(TABLE2[k][j] >= TABLE2_EQN3[j] for k in range(2, 8))
              and any(TABLE2[k][j] > TABLE2_EQN3[j] for k in range(2, 8))]
    assert little == ["X7"]
    assert (f"{' and '.join(gain)} gain, {' and '.join(little)} a little, "
            f"{', '.join(lose[:-1])} and {lose[-1]} lose") in text
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


def _href(words: str) -> list[str]:
    (links,) = [links for title, _, links in _learn().PRESETS if words in title]
    return [href for _, href in links]


def _eqn3_by_degree(rows, p):
    """Eqn 3's terms summed by degree k, ``[m][k]``, from the oracle's own I(Xm; Y | B)."""
    import itertools
    import math

    from oracle import cmi

    return [[sum(cmi(rows, m, b) for b in itertools.combinations(
        [j for j in range(p) if j != m], k)) / (math.comb(p, k) * (p - k)) for k in range(p)]
        for m in range(p)]


def test_xor_demo_depth_one_sees_nothing_and_greedy_trees_use_lower_degrees():
    from _tables import rows_of, xor_table
    from oracle import enumerate_trees

    from varimp_core.exact.recursion import exact_importances

    text, rows = _demo("XOR"), rows_of(xor_table(2, 2))
    assert "/decomposition?problem=xor:irrelevant=2&K=4" in _href("XOR")
    # Depth 1 tests one variable at the root, which says nothing: I(Xi; Y) = 0 for each bit.
    assert "Trees stopped at depth 1, like any one-variable screen, see nothing" in text
    for K in range(1, 5):
        assert enumerate_trees(rows, 4, K, max_depth=1) == [0.0] * 4
        assert exact_importances(xor_table(2, 2), max_features=K, max_depth=1).total == 0
    # By hand, per relevant bit.  K = 1 (Eqn 3): of the C(3, k) sets B of size k, C(2, k-1)
    # hold the partner and give 1 bit: 1 / (C(4, k) (4 - k)) each, so 0, 1/12, 1/6, 1/4.
    # K = 4: the root ties at 0 (drawn uniformly); after a relevant root the partner wins at
    # once (degree 1, probability 1/2), after an irrelevant one a relevant bit is drawn next
    # with probability 2/3 (partner at degree 2), else the partner waits until degree 3:
    # the pair's 1 bit splits 1/2, 1/3, 1/6 over degrees 1, 2, 3, half of it to each bit.
    k1, k4 = [0, 1 / 12, 1 / 6, 1 / 4], [0, 1 / 4, 1 / 6, 1 / 12]
    assert sum(k1) == pytest.approx(0.5) and sum(k4) == pytest.approx(0.5)
    assert _eqn3_by_degree(rows, 4)[0] == pytest.approx(k1)
    depth = [enumerate_trees(rows, 4, 4, max_depth=d)[0] for d in range(5)]  # oracle by degree
    assert [b - a for a, b in zip(depth, depth[1:])] == pytest.approx(k4)
    for K, expected in ((1, k1), (4, k4)):
        by_degree = exact_importances(xor_table(2, 2), max_features=K).by_degree
        np.testing.assert_allclose(by_degree[:2], [expected, expected], atol=1e-12)
        np.testing.assert_allclose(by_degree[2:], 0, atol=1e-12)
    mean_degree = [sum(k * t for k, t in enumerate(terms)) / 0.5 for terms in (k1, k4)]
    assert mean_degree[1] < mean_degree[0]                      # 5/3 < 7/3
    assert "greedy trees (K = 4) reach the same 1/2 bit at lower degrees, because they pick " \
           "the partner bit right after the first" in text


def test_irrelevant_variables_demo():
    from _tables import TABLE2, TABLE2_EQN3, led_table, rows_of, with_irrelevant
    from oracle import eqn3_bruteforce

    from varimp_core.api import compute_importances, load_data
    from varimp_core.exact.recursion import exact_importances_path

    text = _demo("Irrelevant variables")
    assert "Four independent fair bits are added to the LED" in text
    assert all("problem=led:irrelevant=4" in href for href in _href("Irrelevant variables"))
    data = load_data(problem="led:irrelevant=4")
    assert len(data.variables) == 11
    # Theorem 5: irrelevant variables leave the K = 1 importances unchanged; Theorem 3: an
    # irrelevant variable gets 0.  Expected: the oracle's Eqn 3 of the LED alone.
    ours = compute_importances(data, method="exact", max_features=1).importances
    np.testing.assert_allclose(ours, eqn3_bruteforce(rows_of(led_table()), 7) + [0] * 4,
                               atol=1e-12)
    assert "the K=1 importances of X1..X7 do not move and the added bits get 0 " \
           "(Theorems 3 and 5)" in text
    # For K > 1 the K draws often pick irrelevant bits, which win no node: the values move
    # less far from K = 1 than the paper's (no irrelevant bit), by far more than its 3
    # truncated decimals (7 x 0.001) and its Monte Carlo error.  The added bits still get 0
    # (independent of Y and of the inputs, they decrease no impurity at any node).
    path = exact_importances_path(with_irrelevant(led_table(), 4), max_features=range(2, 8))
    for K, result in zip(range(2, 8), path):
        drift = np.abs(result.importances[:7] - TABLE2_EQN3).sum()
        paper = np.abs(np.subtract(TABLE2[K], TABLE2_EQN3)).sum()
        assert drift < paper - 0.05, K
        np.testing.assert_allclose(result.importances[7:], 0, atol=1e-12)
    assert "for K>1 the values drift back towards K=1, because irrelevant variables dilute " \
           "the K draws and damp masking" in text


def test_pruning_demo_keeps_the_first_terms():
    import math

    from _tables import led_table, rows_of
    from oracle import enumerate_trees

    text, rows = _demo("Pruning"), rows_of(led_table())
    assert "/decomposition?problem=led&K=1&depth=2" in _href("Pruning")
    assert "Trees stopped at depth 2 keep only the degree 0 and 1 terms of Eqn 3 " \
           "(Proposition 6)" in text
    terms = _eqn3_by_degree(rows, 7)
    sums = []
    for d in range(1, 8):       # Proposition 6: depth d keeps the terms of degree k < d
        trees = enumerate_trees(rows, 7, 1, max_depth=d)
        assert trees == pytest.approx([sum(t[:d]) for t in terms], abs=1e-12), d
        sums.append(sum(trees))
    # Every term is >= 0, so the importances grow with the depth; their sum reaches
    # I(X; Y) = log2 10 only at full depth (0 and 8 differ in one segment alone).
    assert all(b >= a - 1e-12 for a, b in zip(sums, sums[1:]))
    assert sums[-1] == pytest.approx(math.log2(10), abs=1e-12)
    assert all(s < math.log2(10) - 0.1 for s in sums[:-1])
    assert "the importances grow term by term and reach the Eqn 3 values, which sum to " \
           "I(X; Y), only at full depth" in text


def test_sym_demo_irrelevant_bits_leave_the_quarter_bit():
    from oracle import enumerate_trees, eqn3_bruteforce

    from varimp_core.api import compute_importances, load_data

    # SYM by its definition in the demo: Y = X1 when the fair bits agree, else a fair coin;
    # two more fair bits, independent of everything.
    rows = [((a, b, c, d), y, (1 / 4 if a == b else 1 / 8) / 4)
            for a in (0, 1) for b in (0, 1) for c in (0, 1) for d in (0, 1)
            for y in ((a,) if a == b else (0, 1))]
    expected = [0.25, 0.25, 0.0, 0.0]
    assert eqn3_bruteforce(rows, 4) == pytest.approx(expected, abs=1e-12)
    assert enumerate_trees(rows, 4, 1) == pytest.approx(expected, abs=1e-12)
    data = load_data(problem="sym:irrelevant=2")
    np.testing.assert_allclose(compute_importances(data, method="exact", max_features=1)
                               .importances, expected, atol=1e-12)
    assert "/masking?problem=sym:irrelevant=2" in _href("SYM")
    assert "Added irrelevant bits get 0 and leave the 0.25 unchanged (Theorem 5)" in _demo("SYM")


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
