"""A link opens a page without loading its data (issue #27, item 4).

The probe of issue #27 opened a Dependence link to a legal large sample
(``led:irrelevant=49``, ``n=870000``): the layout loaded it in the web worker, 5 to 8 s and
+3.5 GB, and two such links held ``/_health`` for 15.8 s.  Here every page's layout is built
from such a link with loading made impossible: a page that needs the data for its layout
fails.  The work belongs to the page's job (Dependence ranks the inputs there).
"""

from __future__ import annotations

import pytest

from pages._framework import datasource
from pages._framework.datachoice import DataChoice

LARGE = {"problem": "led:irrelevant=49", "sampling": "sample", "n": "870000", "seed": "11"}


class _Loaded(AssertionError):
    pass


@pytest.fixture
def no_loading(monkeypatch, tmp_path):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))   # nothing cached: a first visit

    def refuse(*args, **kwargs):
        raise _Loaded("the layout loaded the data")

    monkeypatch.setattr(datasource, "load_prepared", refuse)
    monkeypatch.setattr(DataChoice, "load", refuse)


def _layouts(app_module):
    from dash._pages import PAGE_REGISTRY

    return {p["path"]: p["layout"] for p in PAGE_REGISTRY.values() if callable(p["layout"])}


def test_every_page_opens_a_large_sample_link_without_loading_it(app_module, no_loading):
    layouts = _layouts(app_module)
    assert {"/dependence", "/explain", "/importances", "/selection"} <= set(layouts)
    for path, layout in sorted(layouts.items()):
        try:
            layout(**LARGE)
        except _Loaded as exc:
            pytest.fail(f"{path}: {exc}")


def test_dependence_leaves_the_variable_to_the_job_then_opens_on_it(app_module, monkeypatch,
                                                                   tmp_path):
    """With the ranking not cached the link's page shows the blank choice, "the most
    informative alone"; the job ranks the inputs (plug-in I(X; Y)) and draws the first; the
    next visit opens on it.  On LED every segment but X5 splits the digits less evenly, so
    the first is the one of largest I(X_j; Y), checked here against a count of the sample."""
    import numpy as np

    import pages.dependence as dep
    from pages._framework.params import Context
    from pages._server.jobs import Progress

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    query = {"problem": "led", "sampling": "sample", "n": "400", "seed": "3", "trees": "10"}
    st = dep.initial_state(query)
    assert st["values"]["feature"] is None
    field = dep.forest.fields(st, dep.PARAMS, dep.DISPLAY)["feature"]
    assert field.children[1].placeholder == "The most informative alone"
    settings = dep.PARAMS.settings(st["values"], Context(p=7))
    out = dep.compute(settings, st["page"], Progress(None))
    store = dep.render(out, settings, st["page"])[0]
    prepared = st["page"].load()

    def plug_in_mi(x, y):   # I(X; Y) in bits from the sample's counts, by hand
        joint = np.zeros((int(x.max()) + 1, int(y.max()) + 1))
        np.add.at(joint, (x.astype(int), y.astype(int)), 1)
        joint /= joint.sum()
        px, py = joint.sum(1, keepdims=True), joint.sum(0, keepdims=True)
        nz = joint > 0
        return float((joint[nz] * np.log2(joint[nz] / (px @ py)[nz])).sum())

    X, y = prepared.X_numeric, prepared.y
    mi = [plug_in_mi(X[:, j], y) for j in range(X.shape[1])]
    best = prepared.variables[int(np.argmax(mi))]
    assert out["feature"] == best and store["settings"]["feature"] == best
    assert store["result"] == dep.VIEW.key(st["page"], settings, {})   # cached as asked
    assert dep.initial_state(query)["values"]["feature"] == best       # the next visit


def test_every_pages_first_computation_on_such_a_link_goes_to_its_job(app_module, no_loading):
    """The first visit's plain callback (the peek) of every computed view finds nothing
    cached and leaves the work to the job: it loads, prepares and bins nothing."""
    import importlib

    from _pages import first_peek

    from pages._framework.view import JobView

    layouts, seen = _layouts(app_module), []
    for path, layout in sorted(layouts.items()):
        module = importlib.import_module("pages." + (path.strip("/") or "home"))
        views = [v for v in vars(module).values() if isinstance(v, JobView)]
        if not views:
            continue
        tree = layout(**LARGE)
        for view in views:
            try:
                first_peek(view, tree)
            except _Loaded as exc:
                pytest.fail(f"{path} ({view.prefix}): {exc}")
            seen.append(view.prefix)
    assert {"imp", "dep", "explain", "sel-null", "meas", "inter"} <= set(seen), seen


def _analyst_csv(n: int = 1500) -> str:
    """An analyst's table: an identifier, a date, text, numbers with missing values."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(4)
    df = pd.DataFrame({"customer_id": [f"C{i:06d}" for i in rng.permutation(n)],
                       "signup": (np.datetime64("2019-01-01") + rng.integers(0, 900, n)).astype(str),
                       "region": rng.choice(["North", "South", "East"], n)})
    for j in range(8):
        col = rng.normal(size=n).round(2) * 10 ** (j % 3)
        col[rng.random(n) < 0.03] = np.nan
        df[f"m{j}"] = col
    df["churned"] = np.where(df["m0"].fillna(0) + rng.normal(size=n) > 0, "yes", "no")
    return df.to_csv(index=False)


def test_every_page_opens_a_new_upload_link_without_preparing_the_table(app_module, monkeypatch,
                                                                       tmp_path):
    """Issue #27 item 4's smaller cases: a link to an uploaded table with a new binning or
    a target no job has prepared made every page's layout (its header counts the inputs)
    and validation prepare the whole table in the web request (about 1 s on 10,000 x 60).
    The count and the task now come from the upload's column facts, which the upload's job
    kept; here every layout and every computed view's first plain callback run with
    preparing, loading and reading the table made impossible, and the count is the one
    the page's job then finds."""
    import importlib

    from _pages import first_peek, store_csv

    from pages._framework.view import JobView
    from pages._server import cache

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    info = store_csv(_analyst_csv(), "analyst.csv")
    link = {"source": "upload", "upload": info["key"], "file": "analyst.csv",
            "target": "m3", "bins": "7"}                 # a numeric target: regression

    def refuse(*args, **kwargs):
        raise _Loaded("the request prepared the table")

    real = (datasource.prepare_table, cache.get_table)
    for owner, name in ((datasource, "load_prepared"), (datasource, "prepare_table"),
                        (DataChoice, "load"), (cache, "get_table")):
        monkeypatch.setattr(owner, name, refuse)
    layouts, seen = _layouts(app_module), []
    for path, layout in sorted(layouts.items()):
        try:
            tree = layout(**link)
        except _Loaded as exc:
            pytest.fail(f"{path}: {exc}")
        module = importlib.import_module("pages." + (path.strip("/") or "home"))
        for view in [v for v in vars(module).values() if isinstance(v, JobView)]:
            try:
                first_peek(view, tree)
            except _Loaded as exc:
                pytest.fail(f"{path} ({view.prefix}): {exc}")
            seen.append(view.prefix)
    assert {"imp", "dep", "explain", "meas", "inter"} <= set(seen), seen
    choice = DataChoice.from_page(link)[0]
    # What the page's job finds: the table prepared for this choice.  By hand: the
    # identifier left out, the date as year, month and weekday, region, the 7 other
    # numbers and churned: 12 inputs; the rows with a target value, 1,500 less m3's missing.
    prepared = real[0](real[1](info["key"]), "m3", bins=7)
    assert choice.n_features() == len(prepared.variables) == 12
    assert choice.task() == prepared.task == "regression"
    shape = datasource.upload_shape(choice.as_dict)
    assert shape["variables"] == list(prepared.variables)
    assert shape["rows"] == prepared.n_samples == 1500 - prepared.missing["m3"]


def _problem_names() -> list[str]:
    from varimp_core.problems.registry import list_problems

    return [p["name"] for p in list_problems()]


@pytest.mark.parametrize("sampling", ["exact", "sample"])
def test_every_built_in_problem_opens_every_page_without_loading_it(app_module, no_loading,
                                                                    sampling):
    """Every built-in problem's default link, exact and sampled: every layout and every
    computed view's first plain callback with loading made impossible.  Dependence and
    Explain prepared the data sets bundled with scikit-learn to list their inputs and
    count their rows; drawn whole, those come from the columns alone now."""
    import importlib

    from _pages import first_peek

    from pages._framework.view import JobView

    layouts = _layouts(app_module)
    for name in _problem_names():
        for path, layout in sorted(layouts.items()):
            try:
                tree = layout(problem=name, sampling=sampling)
                module = importlib.import_module("pages." + (path.strip("/") or "home"))
                for view in [v for v in vars(module).values() if isinstance(v, JobView)]:
                    first_peek(view, tree)
            except _Loaded as exc:
                pytest.fail(f"{name} ({sampling}) on {path}: {exc}")


def test_a_bundled_data_sets_inputs_and_rows_equal_its_preparation():
    """Checked against preparing each data set (the job's way): its inputs (digits loses
    its blank pixels) and, for Why this row, its rows."""
    from varimp_core.data.prepare import prepare_problem
    from varimp_core.problems.sampled import REAL_DATASETS

    import pages.explain as explain
    from pages._framework import local_forest

    for name in REAL_DATASETS:
        problem = datasource.problem_of(name)
        prepared = prepare_problem(problem)
        choice = DataChoice.from_page({"problem": name, "sampling": "sample"})[0]
        assert local_forest.problem_variables(choice) == list(prepared.variables), name
        rows = explain.drawn_rows(choice, "forest")
        assert rows["n_rows"] == prepared.n_samples == problem.default_samples, name
    digits = local_forest.problem_variables(DataChoice.from_page({"problem": "digits"})[0])
    assert len(digits) < 64 and "pixel_0_0" not in digits     # blank in every image
    smaller = DataChoice.from_page({"problem": "iris", "sampling": "sample", "n": "40"})[0]
    assert local_forest.problem_variables(smaller) is None    # left to the job


def test_the_one_task_the_facts_leave_open_is_worked_out_in_the_job_not_the_request(
        monkeypatch, tmp_path):
    """A numeric target of 30 values when rows with a missing input are dropped: 12 may go,
    so its task (and with it the impurities offered) cannot be read from the column facts.
    A request says "unknown" and prepares nothing; the page's job prepares the table."""
    import numpy as np
    import pandas as pd

    from _pages import store_csv

    from pages._server import job_signals

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    few = pd.DataFrame({"x": [np.nan] * 12 + [0.0, 1.0, 2.0] * 6, "y": np.arange(30.0)})
    info = store_csv(few.to_csv(index=False), "few.csv")
    choice = {"source": "upload", "upload": info["key"], "target": "y", "missing": "drop"}
    real = datasource.load_prepared

    def refuse(*args, **kwargs):
        raise _Loaded("the request prepared the table")

    monkeypatch.setattr(datasource, "load_prepared", refuse)
    assert datasource.upload_shape(choice)["task"] is None          # a request: unknown
    monkeypatch.setattr(datasource, "load_prepared", real)
    job_signals.start_job("j" * 64)                                   # the page's job
    try:
        shape = datasource.upload_shape(choice)
    finally:
        job_signals.start_job(None)
    # 18 rows kept, 18 values of y: at most 20, so classes (prepare_table's rule).
    assert shape["task"] == "classification" and shape["rows"] == 18 and shape["p"] == 1
