"""The app shell and the Data page: registry, URL state, cache, uploads, browser runs."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest
from _browser import open_page, set_number, visit
from dash.testing.wait import until
from hypothesis import example, given, settings
from hypothesis import strategies as st

from _pages import page_module
from varimp_core.data.prepare import DataError
from varimp_core.exact.information import output_entropy
from varimp_core.problems.registry import get_problem, list_problems

from pages._server import cache, jobs

from pages._framework import controls, datasource, state

from pages._framework.params import Context

data_page = page_module("data")


# -- the app -----------------------------------------------------------------------
def test_app_builds_and_lists_registered_pages(dash_app, app_module):
    import dash

    pages = {p["module"]: p for p in dash.page_registry.values()}
    assert pages["pages.home"]["path"] == "/"
    assert pages["pages.data"]["path"] == "/data"
    assert pages["pages.data"]["name"] == "Data"
    # The navigation lists the registered pages in order, all but the home page (the brand).
    nav = app_module._nav_links()
    assert [link.href for link in nav] == [
        p["relative_path"] for p in sorted(dash.page_registry.values(),
                                           key=lambda p: (p.get("order") or 0, p["name"]))
        if p["module"] != "pages.home"]
    assert app_module.server is dash_app.server
    assert dash_app.server.config["MAX_CONTENT_LENGTH"] == datasource.max_request_bytes()


def _layout_ids(layout) -> set[str]:
    """The ids in ``layout``, as ``/_dash-dependencies`` writes them (a dict id as the JSON
    of its sorted keys)."""
    ids = set()
    for component in [layout, *layout._traverse()]:
        cid = getattr(component, "id", None)
        if isinstance(cid, dict):
            ids.add(json.dumps(sorted(cid)))
        elif cid is not None:
            ids.add(str(cid))
    return ids


def _callback_ids(dependency: dict) -> set[str]:
    def one(cid):
        if isinstance(cid, dict):
            return json.dumps(sorted(cid))
        if cid.startswith("{"):
            wild = any(isinstance(v, list) for v in json.loads(cid).values())
            return None if wild else json.dumps(sorted(json.loads(cid)))
        return cid

    out = dependency["output"]
    parts = out[2:-2].split("...") if out.startswith("..") else [out]
    # A callback without outputs has a hash for one (no component).
    outputs = {one(p.rsplit(".", 1)[0]) for p in parts
               if not re.fullmatch(r"[0-9a-f]{64}", p.rsplit(".", 1)[0])}
    return outputs | {one(d["id"]) for d in (*dependency["inputs"], *dependency["state"])}


def test_every_callback_names_ids_of_the_shell_or_a_page(app_module, dash_app):
    """The app suppresses Dash's callback exceptions (the browser would log "ID running
    component not found" when a page is left mid-job, issue 26), which also turns off
    Dash's check of every callback's ids against all page layouts at the first request:
    that check is here instead.  Every id a callback names is in the shell's layout or in
    a page's."""
    from dash import html, page_registry

    client = app_module.server.test_client()
    client.get("/")
    dependencies = client.get("/_dash-dependencies").get_json()
    layouts = [page["layout"]() if callable(page["layout"]) else page["layout"]
               for page in page_registry.values()]
    known = _layout_ids(html.Div([*layouts, dash_app.layout]))
    known |= {"_pages_location", "_pages_content", "_pages_store", "_pages_dummy"}
    # Pattern ids with ALL or MATCH may match nothing (the Data page's leak buttons exist
    # only once a leak is found): only the exact ids must be somewhere.
    missing = {cid for d in dependencies for cid in _callback_ids(d)} - known - {None}
    assert len(dependencies) > 100 and not missing, sorted(missing)


def test_health_route(app_module):
    response = app_module.server.test_client().get("/_health")
    assert response.status_code == 200
    assert response.get_data(as_text=True) == "ok"


def test_server_refuses_oversize_upload_with_a_message(app_module):
    limit = app_module.server.config["MAX_CONTENT_LENGTH"]
    contents = "data:text/csv;base64," + "A" * (limit + 10)
    body = json.dumps({"output": "data-upload-info.data", "outputs": {},
                       "inputs": [{"id": "data-upload", "property": "contents",
                                   "value": contents}], "changedPropIds": []})
    response = app_module.server.test_client().post(
        "/_dash-update-component", data=body, content_type="application/json")
    assert response.status_code == 413
    text = response.get_data(as_text=True)
    assert f"limited to {datasource.max_upload_bytes() / 2**20:g} MiB" in text
    assert "Traceback" not in text


def test_upload_over_the_limit_is_refused_by_the_callback_logic():
    # Within the request limit (base64 overhead) but over the file limit.
    raw = b"a,b\n" + b"1,2\n" * ((datasource.max_upload_bytes() // 4) + 10)
    contents = "data:text/csv;base64," + base64.b64encode(raw).decode()
    with pytest.raises(DataError, match="limit"):
        datasource.store_upload(contents, "big.csv")


# -- URL state ---------------------------------------------------------------------
def test_bad_link_values_fall_back_with_a_note():
    params, notes = datasource.parse_data_query(
        {"problem": "nope", "sampling": "sample", "n": "-3", "bins": "7"})
    assert params["problem"] == datasource.DEFAULT_PROBLEM
    assert params["n"] is None and params["bins"] == 7
    assert len(notes) == 2
    assert any("problem" in n and "Unknown problem" in n for n in notes)
    assert any("sample size" in n for n in notes)


def test_upload_link_without_key_falls_back_to_a_problem():
    params, notes = datasource.parse_data_query({"source": "upload"})
    assert params["source"] == "problem" and notes


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from([p["name"] for p in list_problems()]),
    sampling=st.sampled_from(["exact", "sample"]),
    n=st.one_of(st.none(), st.integers(1, datasource.MAX_SAMPLES)),
    seed=st.integers(0, 2**32 - 1),
    bins=st.integers(2, datasource.MAX_BINS),
)
def test_data_query_round_trips(name, sampling, n, seed, bins):
    params = datasource.canonical_params(
        {"source": "problem", "problem": name, "sampling": sampling, "n": n, "seed": seed,
         "bins": bins})
    query = {k: v[0] if len(v) == 1 else v
             for k, v in parse_qs(datasource.data_query(params), keep_blank_values=True).items()}
    again, notes = datasource.parse_data_query(query)
    assert notes == []
    assert again == params


@settings(max_examples=40, deadline=None)
@given(numeric=st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                                 max_size=8), max_size=4, unique=True),
       target=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=8))
@example(numeric=[], target=" ")  # blank: the last column, in the store as in the link
def test_upload_query_round_trips_column_names(numeric, target):
    params = datasource.canonical_params(
        {"source": "upload", "upload": "a" * 64, "file": "x&y=z.csv", "target": target,
         "numeric": numeric, "bins": 4})
    query = {k: v[0] if len(v) == 1 else v
             for k, v in parse_qs(datasource.data_query(params), keep_blank_values=True).items()}
    again, notes = datasource.parse_data_query(query)
    assert notes == []
    assert again == params


def test_data_query_distinguishes_empty_list_from_absent():
    params = datasource.DATA_PARAMS
    assert params.query({"numeric": []}) == "numeric="
    assert params.query({"numeric": None}) == ""
    values, _ = params.from_url({"numeric": ""}, Context())
    assert values["numeric"] == []
    values, _ = params.from_url({}, Context())
    assert values["numeric"] is None


# -- cache ---------------------------------------------------------------------------
def test_key_for_is_canonical():
    assert cache.key_for("x", {"a": 1, "b": (2, 3)}) == cache.key_for("x", {"b": [2, 3], "a": 1})
    assert cache.key_for("x", {"a": np.int64(1)}) == cache.key_for("x", {"a": 1})
    assert cache.key_for("x", 1) != cache.key_for("x", 2)
    assert re.fullmatch(r"[0-9a-f]{64}", cache.key_for("anything"))


def test_get_or_compute_computes_once():
    calls = []
    key = cache.key_for("test-once", np.random.default_rng().integers(1 << 60))

    def fn():
        calls.append(1)
        return {"v": np.float64(0.5), "t": (1, 2)}

    assert cache.get_or_compute(key, fn) == {"v": 0.5, "t": [1, 2]}
    assert cache.get_or_compute(key, fn) == {"v": 0.5, "t": [1, 2]}
    assert len(calls) == 1


def test_tables_round_trip_exactly_as_json_text():
    df = pd.DataFrame({"i": [1, 2, 3], "f": [0.1, 1e-300, 0.30000000000000004],
                       "s": ["a", None, "c"], "b": [True, False, True],
                       "m": [np.nan, 2.5, np.inf]})
    key = cache.put_table(df)
    assert cache.put_table(df.copy()) != key          # each upload gets its own random key
    digest = cache.get_upload_store().get(f"upload:{key}")
    assert isinstance(cache.get_upload_store().get(f"table:{digest}"), str)  # text, never pickled
    back = cache.get_table(key)
    pd.testing.assert_frame_equal(back, df)
    assert cache.get_table("0" * 64) is None
    assert cache.get_table("../../etc/passwd") is None


def test_result_cache_round_trips_importance_results():
    from varimp_core.result import ImportanceResult

    r = ImportanceResult(variables=("a", "b"), importances=np.array([0.25, 0.5]),
                         by_degree=np.array([[0.25, 0.0], [0.1, 0.4]]), method="exact",
                         exact=True, information=0.75)
    key = cache.key_for("test-result", float(np.random.default_rng().random()))
    got = cache.get_or_compute_result(key, lambda: r)
    again = cache.get_or_compute_result(key, lambda: pytest.fail("computed twice"))
    np.testing.assert_array_equal(got.importances, r.importances)
    np.testing.assert_array_equal(again.by_degree, r.by_degree)
    assert again.exact and again.information == 0.75


# -- Data page logic -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["led", "xor", "sym", "strobl", "iris", "diabetes"])
def test_summary_matches_the_problem(name):
    problem = get_problem(name)
    out = data_page.apply_choice({"source": "problem", "problem": name})
    assert out["ok"], out.get("error")
    s = out["view"]["summary"]
    assert s["p"] == len(problem.variables)
    assert s["exact"] == problem.has_exact
    if problem.has_exact:
        assert s["N"] is None
        assert s["H_Y"] == pytest.approx(output_entropy(problem.exact_table()))
    else:
        assert s["N"] == problem.default_samples
    assert out["store"]["query"] == out["query"]
    assert len(out["view"]["preview"]["rows"]) <= datasource.PREVIEW_ROWS


def test_bad_option_value_gives_a_sentence():
    out = data_page.apply_choice({"source": "problem", "problem": "led",
                                  "opt_ids": [{"type": "data-opt", "problem": "led",
                                               "key": "noise"}],
                                  "opt_values": [0.9]})
    assert not out["ok"]
    assert "noise" in out["error"] and out["error"].endswith(".")


def test_stale_options_of_another_problem_are_ignored():
    out = data_page.apply_choice({"source": "problem", "problem": "xor",
                                  "opt_ids": [{"type": "data-opt", "problem": "led",
                                               "key": "copies"}],
                                  "opt_values": ["X5:2"]})
    assert out["ok"] and out["params"]["problem"] == "xor"


def test_uploaded_table_flows_to_the_summary():
    csv = "a,b,c,y\n" + "\n".join(f"{i % 3},{i * 0.37 % 5:.3f},{'xyz'[i % 3]},{i % 2}"
                                  for i in range(120))
    contents = "data:text/csv;base64," + base64.b64encode(csv.encode()).decode()
    info = datasource.store_upload(contents, "../t.csv")
    assert info["file"] == "t.csv" and info["target"] == "y"
    assert info["numeric"] == ["b"]
    out = data_page.apply_choice({"source": "upload", "upload": info, "target": "y",
                                  "numeric": info["numeric"]})
    assert out["ok"], out.get("error")
    s = out["view"]["summary"]
    assert (s["p"], s["N"], s["classes"], s["exact"]) == (3, 120, 2, False)
    bad = data_page.apply_choice({"source": "upload", "upload": info, "target": "nope"})
    assert not bad["ok"] and "nope" in bad["error"]


def test_missing_upload_is_a_sentence():
    out = data_page.apply_choice({"source": "upload", "upload": {"key": "f" * 64}})
    assert not out["ok"] and "upload the file again" in out["error"]


def test_job_helpers():
    opts = jobs.background_options("demo", disable=["demo-run"])
    assert opts["background"] is True
    assert [o[0].component_id for o in opts["running"]] == ["demo-run", "demo-job-cancel",
                                                           "demo-job"]
    sent = []
    progress = jobs.Progress(sent.append, min_interval=0)
    progress(text="starting")
    progress(1, 4)
    progress(4, 4, "done")
    assert sent == [(None, "1", "starting"), ("1", "4", "1 of 4"), ("4", "4", "done")]
    assert jobs.error_message(DataError("Bad column")) == "Bad column."
    assert "logged" in jobs.error_message(RuntimeError("internal detail"))


# -- in the browser ------------------------------------------------------------------------
def _label(name: str) -> str:
    return next(o["label"] for o in controls.problem_choices() if o["value"] == name)


def _summary(dash_duo) -> dict:
    return {k: dash_duo.find_element(f"#data-summary-{k}").text for k in ("p", "n", "hy")}


@pytest.mark.browser
def test_data_page_switches_problem_and_shared_link_reproduces_it(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", str(len(get_problem("led").variables)),
                                    timeout=20)
    assert dash_duo.get_logs() == []

    strobl = get_problem("strobl")
    dash_duo.select_dcc_dropdown("#data-problem", value=_label("strobl"))
    dash_duo.wait_for_text_to_equal("#data-summary-p", str(len(strobl.variables)), timeout=20)
    dash_duo.wait_for_text_to_equal("#data-summary-n", f"{strobl.default_samples:,}",
                                    timeout=20)
    shown = _summary(dash_duo)

    url = dash_duo.driver.current_url
    query = parse_qs(urlsplit(url).query)
    assert query["problem"] == ["strobl"]

    # Without a query the page restores the session's choice.
    visit(dash_duo, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", str(len(strobl.variables)), timeout=20)

    # A shared link, opened in a fresh session, shows the same summary.
    dash_duo.driver.execute_script("window.sessionStorage.clear()")
    visit(dash_duo, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", str(len(get_problem("led").variables)),
                                    timeout=20)
    dash_duo.driver.get(url)
    dash_duo.wait_for_text_to_equal("#data-summary-p", str(len(strobl.variables)), timeout=20)
    assert _summary(dash_duo) == shown
    assert dash_duo.find_element("#data-problem").text.startswith("strobl")
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_a_page_that_cannot_run_on_the_data_is_dimmed_with_its_reason(dash_duo, dash_app):
    """Issue #26: LED with 14 irrelevant inputs has 21 > 20 (the exact limit): the
    navigation dims Decomposition and says why in its title; a link back to LED makes it a
    plain link again."""
    def link(path):
        return dash_duo.find_element(f"#vi-nav a[href^='{path}']")

    open_page(dash_duo, dash_app, "/data?problem=led:irrelevant=14")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "21", timeout=30)
    until(lambda: "vi-nav-limited" in link("/decomposition").get_attribute("class"), 20)
    title = link("/decomposition").get_attribute("title")
    assert "at most 20 inputs" in title and "has 21" in title
    assert "vi-nav-limited" not in link("/masking").get_attribute("class")
    assert "vi-nav-limited" not in link("/importances").get_attribute("class")
    open_page(dash_duo, dash_app, "/data?problem=led")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "7", timeout=30)
    until(lambda: "vi-nav-limited" not in link("/decomposition").get_attribute("class"), 20)
    assert link("/decomposition").get_attribute("title") == ""
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_presentation_flag_and_bad_link(dash_duo, dash_app):
    # A link of the days when the Data page was at / still opens it, with its state.
    open_page(dash_duo, dash_app, "/?problem=xor:relevant=3&bins=999&present=1")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "3", timeout=20)
    assert urlsplit(dash_duo.driver.current_url).path == "/data"
    assert "vi-present" in dash_duo.find_element("#vi-root").get_attribute("class")
    assert "number of bins was ignored" in dash_duo.find_element("#data-link-notes").text
    # The URL the page writes keeps the presentation flag.
    dash_duo.wait_for_contains_text("#data-summary-hy", "bits", timeout=10)
    assert "present=1" in dash_duo.driver.current_url
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_upload_in_the_browser(dash_duo, dash_app, tmp_path):
    good = tmp_path / "small.csv"
    good.write_text("a,b,y\n" + "\n".join(f"{i % 4},{i % 3},{(i % 4 + i % 3) % 2}"
                                          for i in range(60)))
    big = tmp_path / "big.csv"
    big.write_bytes(b"a,b\n" + b"1,2\n" * (datasource.max_upload_bytes() // 4 + 100))

    open_page(dash_duo, dash_app, "/data")
    dash_duo.wait_for_text_to_equal("#data-summary-p", "7", timeout=20)
    dash_duo.find_element("#data-source input[value='upload']").click()
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(good))
    dash_duo.wait_for_text_to_equal("#data-summary-p", "2", timeout=20)
    dash_duo.wait_for_text_to_equal("#data-summary-n", "60", timeout=20)
    assert "source=upload" in dash_duo.driver.current_url

    # Too large: a sentence on the page, and the current data stays.
    dash_duo.find_element("#data-upload input[type='file']").send_keys(str(big))
    dash_duo.wait_for_contains_text(
        "#data-upload-note", f"limited to {datasource.max_upload_bytes() / 2**20:g} MiB",
        timeout=10)
    assert dash_duo.find_element("#data-summary-n").text == "60"
    assert dash_duo.get_logs() == []


def test_data_controls_out_of_range_are_sentences():
    """N = 0, a negative seed and 1 bin are sentences beside their controls, never defaults."""
    values = {**data_page.CONTROLS.defaults(), "sampling": "sample", "n": 0, "seed": -5,
              "bins": 1}
    _, errors = data_page.CONTROLS.validate(values, Context())
    assert errors == {
        "n": "The sample size N must be a whole number from 1 to 1,000,000, not 0.",
        "seed": "The seed must be a whole number from 0 to 4,294,967,295, not -5.",
        "bins": "The number of bins must be a whole number from 2 to 50, not 1."}
    out = data_page.apply_choice({"source": "problem", "problem": "led", "sampling": "sample",
                                  "n": 10**8})
    assert not out["ok"] and out["error"].startswith("The sample size N must be")


@pytest.mark.browser
def test_data_page_out_of_range_n_is_a_sentence_and_nothing_changes(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/data?problem=led&sampling=sample&n=500&seed=1")
    dash_duo.wait_for_text_to_equal("#data-summary-n", "500", timeout=30)
    set_number(dash_duo, "#data-n", 0)
    dash_duo.wait_for_text_to_equal(
        "#data-n-error", "The sample size N must be a whole number from 1 to 1,000,000, not 0.",
        timeout=10)
    dash_duo.wait_for_contains_text("#data-job-status", "Nothing was recomputed", timeout=10)
    assert dash_duo.find_element("#data-summary-n").text == "500"
    assert "n=500" in dash_duo.driver.current_url
    set_number(dash_duo, "#data-n", 300)
    dash_duo.wait_for_text_to_equal("#data-summary-n", "300", timeout=30)
    assert dash_duo.find_element("#data-n-error").text == ""
    assert dash_duo.get_logs() == []


def test_a_worker_whose_first_request_is_not_the_index_serves_the_grid_script():
    """Under gunicorn each worker is a fresh process: Dash registers the scripts it may serve
    at a process's first request, and the pages (which bring dash-ag-grid) came later, so a
    worker that had not rendered the index answered 404 for the grid's script and the page
    said "Error loading dependencies" (half the loads under two workers, CI of stop 32)."""
    import subprocess
    import sys

    probe = ("import app\n"
             "c = app.server.test_client()\n"
             "print(c.get('/_health').status_code)\n"
             "for path in ('dash_ag_grid/dash_ag_grid.min.js', 'dash_ag_grid/async-community.js',"
             " 'dash/dash-renderer/build/dash_renderer.min.js'):\n"
             "    print(c.get('/_dash-component-suites/' + path).status_code)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, cwd=str(Path(__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["200", "200", "200", "200"], out.stdout
