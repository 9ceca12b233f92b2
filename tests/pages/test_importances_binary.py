"""The Importances page with the exact binary forests (issue #15): exact-rf and exact-et as
methods, their values as the marker over scikit-learn's forests without bootstrap, the
refusal before any work, and the "how many trees do I need?" curve."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from _browser import open_page, wait_for_trace
from _pages import upload_frame
from _pages import page_module

from varimp_core.api import compute_importances, load_data
from varimp_core.exact.binary import binary_inputs, estimate_binary_nodes
from varimp_core.result import ImportanceResult
from varimp_core.studies.convergence import (binary_limit, binary_refusal, convergence_curve,
                                             convergence_note)

from pages._framework.datachoice import DataChoice
from pages._server.jobs import Progress
from pages._framework.params import Context

draw = page_module("importances")


@pytest.fixture(scope="module")
def page(app_module):
    import pages.importances as module

    return module


def _frame(n=14, seed=3):
    """Two continuous inputs and a noisy threshold of their sum: small enough for exact-et."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    y = (x1 + 0.5 * x2 + 0.5 * rng.normal(size=n) > 0).astype(int)
    return pd.DataFrame({"x1": np.round(x1, 3), "x2": np.round(x2, 3), "y": y})


@pytest.fixture(scope="module")
def small(page):
    """(data choice of an uploaded small numeric table, the same table as the core loads it)."""
    df = _frame()
    return DataChoice.from_params(upload_frame(df, "two.csv")), load_data(data=df, target="y")


def _plugin(view):
    """The view drawn with plug-in bars: on a sample (this upload) the page's default bars are
    above chance since issue #24, and the plug-in values and exact diamonds are on request."""
    return draw.render_view(view, show="plugin")


def _view(page, data, **values):
    controls = {"method": "exact", "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3", "n_estimators": 100, "bootstrap": [], "random_state": 0,
                "spread": "se", "order": "columns", **values}
    settings = page.PARAMS.settings(controls, Context(p=data.n_features()))
    return draw.view_from_dict(page.compute(settings, data, Progress(None)))


@pytest.mark.parametrize("method,k,criterion", [("exact-rf", 1, "entropy"),
                                                ("exact-rf", 2, "gini"),
                                                ("exact-et", 1, "entropy"),
                                                ("exact-et", 2, "gini")])
def test_exact_binary_view_is_the_core_value(page, small, method, k, criterion):
    data, prepared = small
    view = _view(page, data, method=method, max_features=k, criterion=criterion)
    core = compute_importances(prepared, method=method, max_features=k, criterion=criterion)
    np.testing.assert_allclose(view["result"].importances, core.importances, atol=1e-15)
    assert view["result"].method == method and view["exact"] is None
    out = _plugin(view)
    np.testing.assert_allclose(out["figure"].data[0].y, core.importances, atol=1e-15)
    assert "binary splits" in out["note"]
    if criterion == "entropy":
        # Theorem 2 analogue: fully grown on distinct rows, the sum is the plug-in I(X;Y).
        assert out["theorem2"].endswith("equal, as Theorem 2 says for fully grown trees.")


@pytest.mark.parametrize("method,limit,bootstrap", [("sklearn-et", "exact-et", []),
                                                   ("sklearn-rf", "exact-rf", [])])
def test_marker_over_scikit_learn_is_its_binary_limit(page, small, method, limit, bootstrap):
    data, prepared = small
    view = _view(page, data, method=method, max_features=1, n_estimators=60,
                 bootstrap=bootstrap, random_state=2)
    exact = compute_importances(prepared, method=limit, max_features=1)
    assert view["exact"].method == limit
    out = _plugin(view)
    # the diamonds' trace (the verdicts' chance dash and legend keys are drawn after it)
    diamonds = [t for t in out["figure"].data if t.type == "scatter"
                and t.marker.symbol == "diamond"]
    assert len(diamonds) == 1
    diamonds = diamonds[0]
    np.testing.assert_allclose(diamonds.y, exact.importances, atol=1e-15)
    np.testing.assert_allclose([r["exact"] for r in out["rows"]], exact.importances)
    assert "the value this forest converges to" in out["note"]
    # The marker is the page's own exact-rf/et result: one cache entry for both.
    from pages._framework import results

    cached = results.peek_importances(data.as_dict, {"method": limit, "max_features": 1,
                                                     "max_depth": None,
                                                     "criterion": "entropy"})
    np.testing.assert_allclose(cached.importances, exact.importances, atol=1e-15)


def test_bootstrap_keeps_the_multiway_reference_and_no_curve(page, small):
    data, _ = small
    assert binary_limit("sklearn-rf", None) is None and binary_limit("sklearn-et", None) == \
        "exact-et"
    view = _view(page, data, method="sklearn-rf", max_features=1, n_estimators=20,
                 bootstrap=["on"])
    assert view["exact"].method == "exact"
    out = _plugin(view)
    assert "multiway diamonds" in out["note"]
    assert "turn Bootstrap off" in out["convergence"].layout.annotations[0].text


def test_curve_last_point_is_the_forest_against_exact(page, small):
    """The curve's point at T = n_estimators is |mean of all per-tree values - exact|."""
    data, _ = small
    view = _view(page, data, method="sklearn-et", max_features=2, n_estimators=80,
                 bootstrap=[], random_state=7)
    result, exact = view["result"], view["exact"]
    assert exact.method == "exact-et" and result.per_tree.shape == (80, 2)
    gap = np.abs(result.per_tree.mean(axis=0) - exact.importances)
    fig = _plugin(view)["convergence"]
    # The exact law (exact-et's moments) first, then the sampled curve on top of it.
    expected_l1, expected_max, l1, largest = fig.data
    assert (expected_l1.meta, expected_max.meta) == ("expected-l1", "expected-max")
    assert l1.x[-1] == 80 and len(l1.x) == 80
    assert l1.y[-1] == pytest.approx(gap.sum(), abs=1e-14)
    assert largest.y[-1] == pytest.approx(gap.max(), abs=1e-14)
    # The forest's bars are the mean of its trees: the same gap.
    np.testing.assert_allclose(np.abs(result.importances - exact.importances), gap, atol=1e-14)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_convergence_curve_by_hand():
    """Per-tree values (1, 0), (0, 1), (2, 2) around the exact value (1, 1).

    T = 1: mean (1, 0), gaps (0, 1): sum 1, max 1.  T = 2: mean (1/2, 1/2): sum 1, max 1/2.
    T = 3: mean (1, 1): 0.  Spread around the exact value: sigma_j^2 = (0 + 1 + 1)/3 = 2/3
    for both, so the reference is sqrt(2/pi) * 2 * sqrt(2/3) / sqrt(T).
    """
    forest = ImportanceResult(variables=("a", "b"), importances=[1.0, 1.0],
                              by_degree=np.eye(2), method="sklearn-et",
                              per_tree=np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]),
                              parameters={"bootstrap": False})
    exact = ImportanceResult(variables=("a", "b"), importances=[1.0, 1.0], by_degree=np.eye(2),
                             method="exact-et", exact=True)
    assert convergence_note(forest, exact) is None
    c = convergence_curve(forest, exact)
    assert list(c["n_trees"]) == [1, 2, 3]
    np.testing.assert_allclose(c["l1"], [1.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(c["max_abs"], [1.0, 0.5, 0.0], atol=1e-15)
    ref = math.sqrt(2 / math.pi) * 2 * math.sqrt(2 / 3)
    np.testing.assert_allclose(c["reference"], [ref, ref / math.sqrt(2), ref / math.sqrt(3)])
    # Thinned for a figure: log-spaced T, the first and the last kept, values unchanged.
    many = ImportanceResult(**{**forest.__dict__, "per_tree": np.tile(forest.per_tree, (400, 1))})
    full, thin = convergence_curve(many, exact), convergence_curve(many, exact, points=50)
    assert len(thin) <= 50 and thin["n_trees"].iloc[0] == 1 and thin["n_trees"].iloc[-1] == 1200
    np.testing.assert_array_equal(thin["l1"], full["l1"].iloc[thin["n_trees"] - 1])
    other = ImportanceResult(**{**exact.__dict__, "variables": ("a", "c")})
    with pytest.raises(ValueError, match="same variables"):
        convergence_curve(forest, other)
    assert "does not converge" in convergence_note(
        forest, ImportanceResult(**{**exact.__dict__, "method": "exact"}))


def test_too_many_nodes_is_refused_before_any_work(page, monkeypatch):
    """Iris (150 rows, 4 continuous inputs): exact-et would need millions of nodes."""
    from pages._framework import results

    def no_work(*args, **kwargs):
        raise AssertionError("the exact recursion was started")

    monkeypatch.setattr(results, "compute_importances", no_work)
    data = DataChoice.from_page({"problem": "iris"})[0]
    with pytest.raises(ValueError) as info:
        _view(page, data, method="exact-et", max_features=2)
    X, y, sw = binary_inputs(load_data(problem="iris"))
    # the page's quick estimate: 400 probes (the method itself estimates again with 4,000)
    est = estimate_binary_nodes(X, y, method="exact-et", max_features=2, sample_weight=sw,
                                n_probes=400)
    assert est > 300_000
    text = str(info.value)
    # Past the limit the page decides at once from the estimate's floor (3 hits among all its
    # probes) and says "at least" it: no sampled estimate is below it.
    said = re.match(r"The exact Extra-Trees value \(exact-et\) would need at least (\S+) "
                    r"distinct nodes on these 150 rows and 4 inputs, beyond the limit of 300,000",
                    text)
    assert said is not None, text
    assert 300_000 < float(said.group(1).replace(",", "")) <= est * 1.001
    assert "\n" not in text and text.endswith(".")


def test_methods_are_offered_with_their_labels(page):
    options = {o["value"]: o for o in page.method_options(Context(p=25))}
    assert options["exact-rf"]["label"] == \
        "Exact: scikit-learn RandomForest, bootstrap off (binary splits)"
    assert not options["exact-et"]["disabled"] and options["exact"]["disabled"]
    s = page.PARAMS.settings({"method": "exact-et", "max_features": 2, "max_depth": 3,
                              "criterion": "gini", "k_semantics": "sklearn",
                              "n_estimators": 5, "bootstrap": [], "random_state": 0,
                              "spread": "se", "order": "columns"}, Context(p=2))
    assert s == {"method": "exact-et", "max_features": 2, "max_depth": 3, "criterion": "gini",
                 "n_trees": None, "precision": None, "order": "columns"}  # blank T and epsilon: 100, 0.01


@pytest.mark.browser
def test_picking_exact_et_draws_it(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/importances?problem=led&K=2")
    led = load_data(problem="led")
    # K = 2 under id3 semantics first, then scikit-learn's ExtraTrees limit, which differs.
    wait_for_trace(dash_duo, "#imp-graph",
                   compute_importances(led, method="exact", max_features=2).importances)
    dash_duo.find_element("#imp-method input[value='exact-et']").click()
    expected = compute_importances(led, method="exact-et", max_features=2).importances
    wait_for_trace(dash_duo, "#imp-graph", expected, timeout=60)
    dash_duo.wait_for_contains_text("#imp-note", "scikit-learn ExtraTrees (binary splits)",
                                    timeout=10)
    assert "method=exact-et" in dash_duo.driver.current_url
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []


def _depth_of(X) -> int:
    """The bound's largest depth by hand: 1 + b + ... + b^(D-1) <= 300,000 with b = 2 sum (c - 1)."""
    b = 2 * sum(len(np.unique(col)) - 1 for col in np.asarray(X, dtype=float).T)
    depth, total, power = 1, 1, 1
    while total + power * b <= 300_000:
        power *= b
        total += power
        depth += 1
    return depth


def _penguin_numbers() -> pd.DataFrame:
    """344 rows of three numbers with hundreds of distinct values each, as palmerpenguins'."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"bill": rng.normal(44, 5, 344).round(1),
                       "flipper": rng.normal(200, 14, 344).round(0),
                       "mass": rng.normal(4200, 800, 344).round(-1)})
    df["y"] = (df["bill"] + rng.normal(0, 4, 344) > 44).astype(int)
    return df


def test_exact_binary_choices_say_what_fits_on_the_data_once_the_data_page_ran(page,
                                                                               monkeypatch):
    """Issue #26: exact-rf / exact-et offered on an upload where fully grown trees cannot be
    afforded say so before the click, with the largest depth sure to run; that depth runs, a
    fully grown link is refused naming it; a table they refuse whatever the settings (missing
    values) has them disabled with why, and a link to them gets that sentence."""
    import pages.data as data_page
    from pages._framework import datasource
    from pages._framework.view import context_for

    df = _penguin_numbers()
    params = upload_frame(df, "penguins.csv")
    data = DataChoice.from_params(params)
    # Before the Data page's job ran: nothing is known, nothing said, nothing computed here.
    assert data.binary_size is None
    plain = {o["value"]: o for o in page.method_options(context_for(data))}
    assert plain["exact-et"]["label"].endswith("(binary splits)")

    out = data_page.apply_choice({"source": "upload", "upload": {"key": params["upload"],
                                  "file": "penguins.csv"}, "target": "y"})
    assert out["ok"], out
    assert out["params"] == params
    data = DataChoice.from_params(params)
    depth = _depth_of(df[["bill", "flipper", "mass"]])
    assert depth == 2          # b = 2 (c_bill + c_flipper + c_mass - 3), in the thousands
    options = {o["value"]: o for o in page.method_options(context_for(data))}
    for method in ("exact-rf", "exact-et"):
        assert not options[method]["disabled"]
        assert f"max depth \u2264 {depth} here (fully grown: at least" in options[method]["label"]
    assert not options["exact"]["disabled"] and "here" not in options["exact"]["label"]
    # Stability and Masking offer them on the same data with the same words.
    import pages.masking as masking
    import pages.stability as stability
    for offered in (stability.method_options(context_for(data)),
                    masking.method_choices(masking.data_context(data))):
        labels = {o["value"]: o["label"] for o in offered if not o.get("disabled")}
        assert all(f"max depth \u2264 {depth} here" in labels[m] for m in ("exact-rf", "exact-et"))

    from pages._framework import results

    monkeypatch.setattr(results, "compute_importances", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("the exact recursion was started")))
    with pytest.raises(ValueError, match=rf"use a max depth of at most {depth} \(sure to fit"):
        _view(page, data, method="exact-et")
    monkeypatch.undo()
    view = _view(page, data, method="exact-et", max_depth=depth)
    core = compute_importances(load_data(data=df, target="y"), method="exact-et",
                               max_features=1, max_depth=depth)
    np.testing.assert_allclose(view["result"].importances, core.importances, atol=1e-15)

    holes = df.copy()
    holes.loc[::9, "flipper"] = np.nan
    params = upload_frame(holes, "holes.csv")
    out = data_page.apply_choice({"source": "upload", "upload": {"key": params["upload"],
                                  "file": "holes.csv"}, "target": "y"})
    assert out["ok"] and out["params"] == params, out
    data = DataChoice.from_params(params)
    ctx = context_for(data)
    options = {o["value"]: o for o in page.method_options(ctx)}
    for method in ("exact-rf", "exact-et"):
        assert options[method]["disabled"]
        assert "'flipper' has missing values" in options[method]["label"]
    for offered in (stability.method_options(context_for(data)),
                    masking.method_choices(masking.data_context(data))):
        off = {o["value"] for o in offered if o.get("disabled")}
        assert {"exact-rf", "exact-et"} <= off
    values, notes = page.initial_values({"method": "exact-et"}, data, ctx)
    assert values["method"] != "exact-et"
    assert any("'exact-et' is not available here: input column 'flipper' has missing values"
               in n for n in notes), notes


def test_exact_et_says_when_its_compiled_run_takes_fully_grown_trees_at_k1(page):
    """Issue #30: on 44 rows of 3 numbers (about 4e5 nodes fully grown) exact-et at K = 1 runs
    the compiled recursion, which accepts them; the choice says so, exact-rf keeps the depth
    that fits; the page draws K = 1 fully grown, and refuses K = 2 saying K = 1 fits."""
    import pages.data as data_page
    import pages.stability as stability
    from pages._framework.view import context_for

    rng = np.random.default_rng(0)
    X = rng.normal(size=(44, 3)).round(4)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["y"] = (X.sum(axis=1) + rng.normal(size=44) > 0).astype(int)
    params = upload_frame(df, "forty-four.csv")
    out = data_page.apply_choice({"source": "upload", "upload": {"key": params["upload"],
                                  "file": "forty-four.csv"}, "target": "y"})
    assert out["ok"], out
    data = DataChoice.from_params(params)
    depth = _depth_of(df[["a", "b", "c"]])
    assert depth == 3                    # b = 2 * 3 * 43 = 258: 1 + 258 + 258^2 <= 300,000
    for options in (page.method_options(context_for(data)),
                    stability.method_options(context_for(data))):
        labels = {o["value"]: o["label"] for o in options if not o["disabled"]}
        assert re.search(r"exact-et|ExtraTrees", labels["exact-et"])
        said = re.search(rf"fully grown at K = 1 only \((about [0-9.]+e\+05) nodes\); max depth "
                         rf"\u2264 {depth} at any K$", labels["exact-et"])
        assert said, labels["exact-et"]
        assert labels["exact-rf"].endswith(f"max depth \u2264 {depth} here (fully grown: "
                                           f"{said.group(1)} nodes, over 300,000)"), labels
    # the page's job lets K = 1 through (the run itself, 365,000 nodes, is tested in the core;
    # on this sample the page's verdicts rerun it for each of 19 permutations, 25 s)
    loaded = load_data(data=df, target="y")
    assert binary_refusal(loaded, method="exact-et", max_features=1) is None
    with pytest.raises(ValueError, match=r"limit of 300,000; use K = 1 \(max_features=1\), "
                                         r"which fits fully grown here"):
        _view(page, data, method="exact-et", max_features=2)


@pytest.mark.browser
def test_the_depth_that_fits_is_shown_beside_the_choice_and_runs(dash_duo, dash_app):
    """Seen in the browser: after the Data page's job, Importances on the upload labels
    exact-et with the depth sure to run, and a link at that depth draws its values."""
    import pages.data as data_page

    df = _penguin_numbers()
    params = upload_frame(df, "penguins.csv")
    assert data_page.apply_choice({"source": "upload", "upload": {"key": params["upload"],
                                   "file": "penguins.csv"}, "target": "y"})["ok"]
    data = DataChoice.from_params(params)
    open_page(dash_duo, dash_app, "/importances?method=exact-et&depth=2&show=plugin&"
              + data.query())
    expected = compute_importances(load_data(data=df, target="y"), method="exact-et",
                                   max_features=1, max_depth=2).importances
    wait_for_trace(dash_duo, "#imp-graph", expected, timeout=60)
    dash_duo.wait_for_contains_text("#imp-method", "max depth \u2264 2 here (fully grown: "
                                    "at least", timeout=10)
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []
