"""Production hygiene, limits and job guards (issue "Hardening", parts 2 and 3).

* no debug mode or dev tools unless ``VARIMP_DEBUG=1`` (even with ``DASH_*``
  variables set), no traceback in any answer, errors logged with their
  traceback and the request id;
* security headers on every response; ``X-Request-ID`` accepted when safe,
  otherwise generated, and echoed;
* no ``pickle``/``eval``/``exec``/``yaml.load`` in our own source;
* the limits of :mod:`pages._server.limits` follow the environment, are shown on
  the pages before a click, and refuse what is over them with a sentence;
* a background job stops at ``VARIMP_JOB_TIMEOUT`` (through Dash's real
  Diskcache manager), fails with a sentence past ``VARIMP_MAX_MEMORY_MB``, and
  a killed (cancelled) job's cache lock does not block the next caller.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from _servers import ROOT, DashCallbackClient

from pages._server import cache, guards, hygiene, jobs, limits
from pages._server import store

_INLINE = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>(.*?)</script>", re.S)


def _app_headers(app_module) -> dict:
    """SECURITY_HEADERS with the app's CSP, whose script hashes are found here independently:
    sha256 of every inline script the index page runs (not in a comment, not JSON data)."""
    import base64
    import hashlib

    page = re.sub(r"<!--.*?-->", "", app_module.server.test_client().get("/").get_data(True),
                  flags=re.S)
    hashes = {"'sha256-%s'" % base64.b64encode(hashlib.sha256(m.encode()).digest()).decode()
              for m in _INLINE.findall(page)}
    assert len(hashes) >= 2     # the renderer's start and at least one clientside callback
    return {**hygiene.SECURITY_HEADERS,
            "Content-Security-Policy": hygiene.CSP.format(" ".join(sorted(hashes)))}


def _run_python(code: str, env: dict | None = None, timeout: float = 120):
    """Run ``code`` in a fresh interpreter at the project root (own Dash registry)."""
    env = {**os.environ, **(env or {})}
    env.pop("VARIMP_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _walk(component):
    """Every component of a layout tree."""
    yield component
    children = getattr(component, "children", None)
    if children is None:
        return
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if hasattr(child, "to_plotly_json"):
            yield from _walk(child)


def _by_id(layout, cid):
    return next(c for c in _walk(layout) if getattr(c, "id", None) == cid)


def _text(layout) -> str:
    return " ".join(c for comp in _walk(layout)
                    for c in ([comp.children] if isinstance(getattr(comp, "children", None), str)
                              else []))


# -- no debug, no tracebacks -----------------------------------------------------------------
def test_production_app_has_no_debug_and_no_dev_tools(app_module):
    app, server = app_module.app, app_module.server
    assert not hygiene.debug_enabled()
    assert server.debug is False
    assert server.config["PROPAGATE_EXCEPTIONS"] is False
    for flag in ("ui", "props_check", "serve_dev_bundles", "hot_reload", "prune_errors"):
        assert not app._dev_tools[flag], flag
    page = server.test_client().get("/").get_data(as_text=True)
    config = json.loads(re.search(r'<script id="_dash-config" type="application/json">(.*?)'
                                  r'</script>', page, re.S).group(1))
    assert config["ui"] is False and config["props_check"] is False
    assert "hot_reload" not in config


def test_dash_environment_variables_cannot_turn_dev_tools_on():
    # Dash reads DASH_UI, DASH_HOT_RELOAD ... when the app is built; production ignores them.
    code = ("import json, re, app; c = app.server.test_client(); "
            "page = c.get('/').get_data(as_text=True); "
            "cfg = json.loads(re.search(r'<script id=\"_dash-config\" type=\"application/json\">"
            "(.*?)</script>', page, re.S).group(1)); "
            "print(json.dumps({'ui': cfg['ui'], 'props': cfg['props_check'], "
            "'hot': 'hot_reload' in cfg, 'debug': app.server.debug, "
            "'dev': dict(app.app._dev_tools)}))")
    env = {f"DASH_{k}": "true" for k in ("DEBUG", "UI", "PROPS_CHECK", "HOT_RELOAD",
                                         "SERVE_DEV_BUNDLES", "PRUNE_ERRORS")}
    out = json.loads(_run_python(code, env).stdout.strip().splitlines()[-1])
    assert out["ui"] is False and out["props"] is False and not out["hot"]
    assert out["debug"] is False
    assert not any(out["dev"][k] for k in ("ui", "hot_reload", "serve_dev_bundles",
                                           "prune_errors"))


_FAILING_APP = r'''
import json, sys
from dash import Dash, Input, Output, html
from pages._server import hygiene

app = Dash(__name__)
app.layout = html.Div([html.Button("go", id="go"), html.Div(id="out")])

@app.callback(Output("out", "children"), Input("go", "n_clicks"), prevent_initial_call=True)
def boom(n):
    raise RuntimeError("secret internal detail 4242")

hygiene.install(app)
client = app.server.test_client()
client.get("/")
body = {"output": "out.children", "outputs": {"id": "out", "property": "children"},
        "inputs": [{"id": "go", "property": "n_clicks", "value": 1}],
        "changedPropIds": ["go.n_clicks"]}
r = client.post("/_dash-update-component", json=body, headers={"X-Request-ID": "req-hyg-7"})
print(json.dumps({"status": r.status_code, "body": r.get_data(as_text=True),
                  "rid": r.headers.get("X-Request-ID"), "type": r.content_type,
                  "headers": {k: r.headers.get(k) for k in hygiene.SECURITY_HEADERS}}))
'''


def test_failing_callback_answers_a_sentence_and_logs_the_traceback_with_the_request_id():
    proc = _run_python(_FAILING_APP)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["status"] == 500
    assert out["body"] == hygiene.SERVER_ERROR
    assert "Traceback" not in out["body"] and "4242" not in out["body"]
    assert out["type"].startswith("text/plain")
    assert out["rid"] == "req-hyg-7"
    import base64
    import hashlib

    start = hashlib.sha256(b"var renderer = new DashRenderer();").digest()  # its one inline script
    policy = hygiene.CSP.format("'sha256-%s'" % base64.b64encode(start).decode())
    assert out["headers"] == {**hygiene.SECURITY_HEADERS, "Content-Security-Policy": policy}
    # Server side: one ERROR line with the request id, then the traceback.
    log = proc.stderr
    error_lines = [line for line in log.splitlines() if " ERROR " in line]
    assert len(error_lines) == 1, log[-2000:]
    assert "[req-hyg-7]" in error_lines[0]
    assert "Traceback (most recent call last)" in log
    assert "RuntimeError: secret internal detail 4242" in log


@pytest.mark.parametrize("body", [
    {"output": "imp-graph.figure", "outputs": 3, "inputs": "not a list", "changedPropIds": []},
    {"output": "imp-graph.figure", "outputs": {"id": "imp-graph", "property": "figure"},
     "inputs": [{"value": 1}], "changedPropIds": []},
    {"output": "imp-graph.figure", "outputs": {"id": "imp-graph", "property": "figure"},
     "inputs": [], "state": 7},
    {"outputs": [], "inputs": []},
    [1, 2, 3],
], ids=["inputs-not-a-list", "input-without-id", "state-not-a-list", "no-output", "a-list"])
def test_a_crafted_callback_body_is_a_400_with_a_sentence(app_module, body):
    """Issue #17: a malformed callback body is the client's error: HTTP 400 and a phrase
    saying what is wrong, never a 500, never a traceback."""
    response = app_module.server.test_client().post(
        "/_dash-update-component", headers={"X-Request-ID": "malformed-1"}, json=body)
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert text.startswith("This request is not one the app's pages send (")
    assert "Traceback" not in text
    assert response.headers["X-Request-ID"] == "malformed-1"


def test_background_job_error_is_a_sentence():
    try:
        {}["missing"]
    except KeyError as exc:
        message = jobs.error_message(exc)
    assert "Traceback" not in message and "missing" not in message
    assert message.startswith("Something went wrong")


# -- headers and request ids ------------------------------------------------------------------
def _some_asset(app_module) -> str:
    folder = Path(app_module.app.config.assets_folder)
    return "/assets/" + sorted(p.name for p in folder.iterdir() if p.suffix == ".css")[0]


@pytest.mark.parametrize("method, path, status", [
    ("get", "/", 200), ("get", "/importances", 200), ("get", "/_health", 200),
    ("get", "/_dash-layout", 200), ("get", "/_dash-dependencies", 200),
    ("get", "asset", 200), ("post", "/_health", 405), ("post", "/_dash-update-component", 400),
])
def test_security_headers_on_every_response(app_module, method, path, status):
    client = app_module.server.test_client()
    if path == "asset":
        path = _some_asset(app_module)
    kwargs = {"data": "not json", "content_type": "application/json"} if method == "post" else {}
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status
    for name, value in _app_headers(app_module).items():
        assert response.headers.get(name) == value, (path, name)
    assert re.fullmatch(r"[0-9a-f]{16}", response.headers["X-Request-ID"])


def test_security_headers_on_a_refused_upload(app_module):
    limit = app_module.server.config["MAX_CONTENT_LENGTH"]
    response = app_module.server.test_client().post(
        "/_dash-update-component", data="x" * (limit + 1), content_type="application/json")
    assert response.status_code == 413
    headers = _app_headers(app_module)
    assert {k: response.headers.get(k) for k in headers} == headers


@pytest.mark.parametrize("sent, kept", [
    ("abc-123", True), ("7f2c1e0a-5b1d-4c3e-9a77-0123456789ab", True), ("a.b_c-D", True),
    ("", False), ("has space", False), ("<script>alert(1)</script>", False),
    ("x" * 129, False), ("-leading-dash", False), ("semi;colon", False),
])
def test_request_id_is_echoed_when_safe_else_generated(app_module, sent, kept):
    client = app_module.server.test_client()
    response = client.get("/_health", headers={"X-Request-ID": sent})
    rid = response.headers["X-Request-ID"]
    if kept:
        assert rid == sent
    else:
        assert rid != sent and re.fullmatch(r"[0-9a-f]{16}", rid)


def test_generated_request_ids_differ_and_do_not_leak_between_requests(app_module):
    client = app_module.server.test_client()
    ids = {client.get("/_health").headers["X-Request-ID"] for _ in range(5)}
    assert len(ids) == 5
    assert hygiene.request_id.get() == "-"  # reset after each request


def test_log_lines_carry_the_request_id():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello", None, None)
    token = hygiene.request_id.set("rid-42")
    try:
        hygiene.RequestIdFilter().filter(record)
    finally:
        hygiene.request_id.reset(token)
    line = logging.Formatter(hygiene.LOG_FORMAT).format(record)
    assert "[rid-42] x: hello" in line


# -- no code from users -------------------------------------------------------------------------
_FORBIDDEN = re.compile(r"\bpickle\.loads?\b|(?<![\w.])eval\(|(?<![\w.])exec\(|\byaml\.load\(|"
                        r"\bmarshal\.loads?\b|\bdill\.loads?\b")


def test_no_pickle_or_eval_in_our_source():
    files = [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py")),
             *sorted((ROOT / "varimp_core").rglob("*.py"))]
    assert len(files) > 30
    hits = [f"{f.relative_to(ROOT)}:{n}: {line.strip()}"
            for f in files for n, line in enumerate(f.read_text().splitlines(), 1)
            if _FORBIDDEN.search(line)]
    assert hits == []
    # The pattern does find what it looks for.
    assert all(_FORBIDDEN.search(s) for s in ("pickle.loads(b)", "x = eval(text)",
                                              "exec(code)", "yaml.load(f)"))
    assert not any(_FORBIDDEN.search(s) for s in ("model.eval()", "ast.literal_eval(s)",
                                                  "safe_eval(x)", "yaml.safe_load(f)"))


# -- limits ---------------------------------------------------------------------------------------
def test_limits_follow_the_environment_at_call_time(monkeypatch):
    from varimp_core.exact.information import MAX_SUBSET_FEATURES

    for name in limits.LIMITS:
        monkeypatch.delenv(limits.LIMITS[name].env, raising=False)
    assert limits.max_trees() == 10_000 and limits.max_trees(2000) == 2000
    assert limits.max_exact_features() == MAX_SUBSET_FEATURES == 20
    assert limits.max_replicates() == 2000 and limits.job_timeout() == 600
    assert limits.max_memory_mb() == 4096
    monkeypatch.setenv("VARIMP_MAX_TREES", "5000")
    assert limits.max_trees() == 5000 and limits.max_trees(2000) == 2000
    assert limits.max_trees(10_000) == 5000
    for bad in ("abc", "0", "-5", "1.5", ""):
        monkeypatch.setenv("VARIMP_MAX_TREES", bad)
        assert limits.max_trees() == 10_000, bad
    monkeypatch.setenv("VARIMP_MAX_TREES", "1000000")  # never above the server's ceiling
    assert limits.max_trees() == 100_000
    monkeypatch.setenv("VARIMP_MAX_EXACT_FEATURES", "50")
    assert limits.max_exact_features() == MAX_SUBSET_FEATURES
    monkeypatch.setenv("VARIMP_MAX_EXACT_FEATURES", "6")
    assert limits.max_exact_features() == 6


def test_a_sampled_problem_is_capped_by_the_server_not_the_core(monkeypatch):
    """The core draws any size (issue 16); the server refuses a spec past its cell limit
    before drawing: madelon's default has 20 relevant inputs + 480 probes + Y = 501 columns."""
    from pages._framework import datasource
    from varimp_core.data.prepare import DataError

    monkeypatch.setenv("VARIMP_MAX_SAMPLE_CELLS", "1000")
    with pytest.raises(DataError, match="2,004 rows.*1,004,004 cells.*limit of 1,000"):
        datasource.load_prepared({"source": "problem", "problem": "madelon:samples=2004",
                                  "sampling": "sample"})
    # xor: 2 inputs + Y = 3 columns; 300 rows are 900 cells, under the limit
    small = datasource.load_prepared({"source": "problem", "problem": "xor",
                                      "sampling": "sample", "n": 300})
    assert small.n_samples == 300


def test_upload_limits_agree_with_the_core(monkeypatch):
    import pandas as pd

    from pages._framework import datasource
    from varimp_core.data.prepare import DataError, prepare_table

    monkeypatch.setenv("VARIMP_MAX_UPLOAD_BYTES", str(3 << 20))
    assert limits.max_upload_bytes() == datasource.max_upload_bytes() == 3 << 20
    monkeypatch.setenv("VARIMP_MAX_CELLS", "1000")
    assert limits.max_cells() == 1000
    assert limits.upload_rule() == "CSV files up to 3 MiB and 1,000 cells (rows \u00d7 columns)."
    df = pd.DataFrame({"a": np.arange(400) % 3, "b": np.arange(400) % 2,
                       "y": np.arange(400) % 5 == 0})  # 1,200 cells
    with pytest.raises(DataError, match="1,000|1000"):  # the server passes its limit
        prepare_table(df, "y", max_cells=limits.max_cells())
    prepare_table(df, "y")  # the core itself refuses no size (a notebook reads any table)


@pytest.fixture
def five_thousand_trees(monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_TREES", "5000")
    monkeypatch.setenv("VARIMP_MAX_REPLICATES", "10")
    monkeypatch.setenv("VARIMP_MAX_EXACT_FEATURES", "6")


def test_limits_are_shown_before_the_click(dash_app, five_thousand_trees):
    import importlib

    page = {name: importlib.import_module(f"pages.{name}")  # loaded by Dash with the app
            for name in ("data", "importances", "masking", "measures")}
    imp = page["importances"].layout(problem="xor")
    # The page shows the bound beside the control; the server checks it (test_page_importances).
    assert "At most 5,000 trees on this server." in _text(_by_id(imp, "imp-trees-field"))
    meas = page["measures"].layout(problem="xor")
    # the page's own cap is lower
    assert "At most 2,000 trees on this server." in _text(_by_id(meas, "meas-trees-field"))
    assert "At most 10 repetitions on this server." in _text(_by_id(meas, "meas-reps-field"))
    masking = page["masking"].layout()
    assert "At most 2,000 trees on this server." in _text(masking)
    data = page["data"].layout()
    line = _by_id(data, "data-limits").children
    for part in ("5 MiB", "1,000 columns", "5,000,000 cells", "up to 6 inputs",
                 "5,000 trees", "10 Monte Carlo replicates", "4,096 MB", "600 s"):
        assert part in line, (part, line)


def test_over_a_limit_is_refused_with_a_sentence(dash_app, five_thousand_trees):
    import pages.decomposition as decomposition
    import pages.importances as imp
    import pages.masking as masking
    import pages.measures as meas
    from pages._framework import datasource
    from pages._framework.datachoice import DataChoice
    from pages._server.jobs import Progress
    from pages._framework.params import Context

    controls = {"method": "forest", "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3",
                "n_estimators": 6000, "bootstrap": [], "random_state": 0, "spread": "se", "order": "columns", "show": "above", "n_permutations": 19}
    _, errors = imp.PARAMS.validate(controls, Context(p=3))
    assert errors["n_estimators"].startswith(
        "Number of trees must be a whole number from 1 to 5,000")
    assert imp.PARAMS.settings({**controls, "n_estimators": 5000},
                               Context(p=3))["n_estimators"] == 5000
    xor = DataChoice.from_page({"problem": "xor"})[0]
    values, notes = imp.initial_values({"problem": "xor", "method": "forest", "trees": "6000"},
                                       xor, Context(p=3))
    assert values["n_estimators"] == 100
    assert any("Number of trees" in n and "5,000" in n for n in notes)
    # The exact method stops at VARIMP_MAX_EXACT_FEATURES inputs (LED has 7).
    led = datasource.parse_data_query({"problem": "led"})[0]
    assert imp.default_method(7) == "sklearn-et"
    assert imp.method_options(Context(p=7))[0]["disabled"] is True
    with pytest.raises(ValueError, match="at most 6 input variables"):
        imp.compute({"method": "exact", "max_features": 1, "max_depth": None,
                     "k_semantics": "id3"}, DataChoice.from_params(led), Progress(None))
    with pytest.raises(ValueError, match="at most 6 inputs"):
        decomposition.compute({"max_features": 1, "max_depth": None, "k_semantics": "id3"},
                              DataChoice.from_params(led), Progress(None))
    with pytest.raises(ValueError, match="repetitions must be a whole number from 1 to 10"):
        meas.STUDY.settings({**meas.STUDY.defaults(), "n_repeats": 11}, Context())
    _, errors = masking.SAMPLED.validate({"sampled": True, "n_estimators": 2001,
                                          "random_state": 0}, Context())
    assert errors["n_estimators"].startswith(
        "Number of trees must be a whole number from 1 to 2,000")


# -- jobs: time, memory, cancel -------------------------------------------------------------------
def test_progress_stops_a_job_past_its_time_limit(monkeypatch):
    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "7")
    assert jobs.Progress(None).timeout == 7
    seen = []
    progress = jobs.Progress(seen.append, timeout=0.05, min_interval=0)
    progress(1, 10)
    time.sleep(0.1)
    with pytest.raises(jobs.JobTimeout) as info:
        progress(2, 10)
    assert len(seen) == 1
    message = jobs.error_message(info.value)
    assert message.startswith("This computation was stopped after 0 s")


def _in_job_process(fn, env: dict, timeout: float = 30):
    """Run ``guards.GuardedJob(fn)`` in a forked process as the Diskcache manager does."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def target():
        os.environ.update(env)
        queue.put(guards.GuardedJob(fn)(queue))

    proc = ctx.Process(target=target)
    t0 = time.monotonic()
    proc.start()
    try:
        return queue.get(timeout=timeout), time.monotonic() - t0
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()


def _sleep_forever(queue):
    try:
        while True:  # work that never reports progress
            time.sleep(0.01)
    except Exception as exc:
        return jobs.error_message(exc)


def _allocate(queue):
    out = []
    for mb in (50, 600):
        try:
            block = np.ones(mb * 2**20 // 8)
            out.append(f"{mb} MB ok ({block.nbytes >> 20})")
        except MemoryError as exc:
            out.append(jobs.error_message(exc))
    return out


def test_job_process_alarm_stops_work_that_reports_no_progress():
    message, _ = _in_job_process(_sleep_forever, {"VARIMP_JOB_TIMEOUT": "1"})
    assert message.startswith("This computation was stopped after 1 s"), message


def test_job_process_memory_limit_is_a_sentence():
    out, _ = _in_job_process(_allocate, {"VARIMP_MAX_MEMORY_MB": "300"})
    assert out[0] == "50 MB ok (50)"
    assert out[1].startswith("This computation needs more memory than one computation may use "
                             "on this server (300 MB)"), out


def test_background_job_stops_at_the_time_limit_through_dash(app_module, monkeypatch):
    """The real Importances callback on the app's Diskcache manager, with a 1 s limit."""
    from pages._framework.datachoice import DataChoice

    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "1")
    client = DashCallbackClient.over_flask(app_module.server.test_client(), "imp-graph.figure",
                                           "/importances")
    data = DataChoice.from_page({"problem": "xor:irrelevant=8", "sampling": "sample",
                                 "n": "5000"})[0]
    controls = {"method": "forest", "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3",
                "n_estimators": 10_000, "bootstrap": [], "random_state": 99,
                "spread": "se", "order": "columns", "show": "above", "n_permutations": 19}
    # a cache miss: what the page's plain callback writes to the store that starts the job
    values = {"imp-miss.data": {"values": controls, "extra": {}, "data": data.to_store()},
              "imp-instance.data": "test"}
    _, _, last = client.run(values, "imp-miss.data", timeout=60)
    error = last["response"]["imp-error"]["children"]
    assert error.startswith("This computation was stopped after 1 s"), last
    assert "imp-graph" not in last["response"]  # the figure keeps what it showed
    # Nothing was cached for these settings: the timeout is not a result.
    import pages.importances as page
    from pages._framework.params import Context

    settings = page.PARAMS.settings(controls, Context(p=10))
    assert page.VIEW.cached(data, settings) is None


def _hold_lock(key):
    cache.get_or_compute(key, lambda: time.sleep(120) or {"slow": True})


def test_a_killed_job_does_not_block_the_next_caller():
    """Cancel kills the job's process; a zombie holding a cache lock counts as gone."""
    import psutil

    key = cache.key_for("test-killed-lock", time.time())
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_hold_lock, args=(key,))
    proc.start()
    deadline = time.monotonic() + 10
    while cache.get_cache().get(f"lock:{key}") is None:
        assert time.monotonic() < deadline, "the job never took its lock"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # as Dash's terminate_job does; not reaped yet
    deadline = time.monotonic() + 5
    while psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert store.holder_is_gone(cache.get_cache().get(f"lock:{key}"))  # no 15-minute wait
    assert cache.get_or_compute(key, lambda: {"fast": True}) == {"fast": True}
    proc.join(5)


@pytest.mark.browser
def test_every_page_runs_under_the_csp_with_a_clean_console(dash_duo, dash_app):
    """Chromium enforces the CSP: a blocked inline script, eval or style is a console error."""
    import dash
    import requests

    dash_duo.start_server(dash_app)
    policy = requests.get(dash_duo.server_url + "/", timeout=30).headers["Content-Security-Policy"]
    scripts = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert "default-src 'self'" in policy and "'unsafe-inline'" not in scripts
    for page in sorted(dash.page_registry.values(), key=lambda p: p["order"]):
        dash_duo.driver.get(dash_duo.server_url + page["path"])
        dash_duo.wait_for_element("#_pages_content h1, #_pages_content h2", timeout=30)
        if page["path"] == "/learn":     # MathJax typesets the formulas
            dash_duo.wait_for_element("mjx-container", timeout=30)
        elif dash_duo.find_elements(".dash-graph"):   # the page's first figure is drawn
            dash_duo.wait_for_element(".js-plotly-plot .main-svg", timeout=120)
        assert dash_duo.get_logs() == [], page["path"]


def test_no_server_version_under_the_dev_server_or_gunicorn(tmp_path):
    import requests
    from _servers import Processes, free_port, serves_health, start_web, wait

    port = free_port()
    procs = Processes(tmp_path, {**os.environ, "VARIMP_CACHE_DIR": str(tmp_path / "cache"),
                                 "VARIMP_PORT": str(port)})
    base = f"http://127.0.0.1:{port}"
    try:
        procs.start("dev", [sys.executable, "app.py"])
        wait(lambda: serves_health(base), 120, "the dev server", procs.procs["dev"], tmp_path / "dev.log")
        servers = [requests.get(base + "/_health", timeout=10).headers.get("Server", "")]
        servers.append(requests.get(start_web(procs, workers=1) + "/_health",
                                    timeout=10).headers.get("Server", ""))
    finally:
        procs.stop_all()
    # Werkzeug's default is "Werkzeug/3.1.9 Python/3.11.2"; gunicorn's name alone is no version
    assert servers[0] == "varimp" and servers[1] in ("", "gunicorn"), servers


#: Every DASH_* switch of a dev tool, each set to turn its tool on.
_DASH_DEV_SWITCHES = {f"DASH_{k}": "true" for k in (
    "DEBUG", "UI", "DEV_TOOLS_UI", "PROPS_CHECK", "DEV_TOOLS_PROPS_CHECK", "HOT_RELOAD",
    "DEV_TOOLS_HOT_RELOAD", "SERVE_DEV_BUNDLES", "DEV_TOOLS_SERVE_DEV_BUNDLES", "PRUNE_ERRORS",
    "VALIDATE_CALLBACKS", "SILENCE_ROUTES_LOGGING")}


def _served_by_python_app_py(tmp_path, extra: dict) -> tuple[dict, list, int]:
    """``python app.py`` with ``extra`` in its environment: its Dash config, the page's
    scripts and their bytes."""
    import requests
    from _servers import Processes, free_port, serves_health, wait

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "VARIMP_DEBUG"}
    procs = Processes(tmp_path, {**env, **extra, "VARIMP_WARM": "0",
                                 "VARIMP_CACHE_DIR": str(tmp_path / "cache"),
                                 "VARIMP_PORT": str(port)})
    base = f"http://127.0.0.1:{port}"
    try:
        procs.start("dev", [sys.executable, "app.py"])
        wait(lambda: serves_health(base), 120, "python app.py", procs.procs["dev"],
             tmp_path / "dev.log")
        page = requests.get(base + "/", timeout=30).text
        scripts = re.findall(r'<script[^>]*src="([^"]+)"', page)
        bundle_bytes = sum(len(requests.get(base + s, timeout=30).content) for s in scripts
                           if s.startswith("/"))
    finally:
        procs.stop_all()
    config = json.loads(re.search(r'<script id="_dash-config" type="application/json">(.*?)'
                                  r'</script>', page, re.S).group(1))
    return config, scripts, bundle_bytes


def test_python_app_py_keeps_dev_tools_off_whatever_dash_variables_say(tmp_path):
    # Dash.run reads the DASH_* variables again after hygiene.install turned the tools off.
    config, scripts, bundle_bytes = _served_by_python_app_py(tmp_path, _DASH_DEV_SWITCHES)
    assert config["ui"] is False and config["props_check"] is False, config
    assert "hot_reload" not in config, config
    dev = [s for s in scripts if ".dev" in s or "development" in s]
    assert dev == [], dev
    # The production bundles are a few MB; the dev ones were 8 MB more.
    assert bundle_bytes < 6 * 2**20, bundle_bytes


def test_varimp_debug_turns_dashs_dev_tools_on_for_a_developer(tmp_path):
    """The one switch that turns them on (issue #27, item 7): Dash's debug defaults, the
    dev-tools UI and props check."""
    config, _, _ = _served_by_python_app_py(tmp_path, {"VARIMP_DEBUG": "1"})
    assert config["ui"] is True and config["props_check"] is True, config


@pytest.mark.parametrize("hops,forwarded,secure", [
    (0, {}, False),
    (0, {"X-Forwarded-Proto": "https"}, False),  # no trusted proxy: a client's header is ignored
    (1, {"X-Forwarded-Proto": "https"}, True),
    (1, {"X-Forwarded-Proto": "http"}, False),
])
def test_hsts_and_a_secure_cookie_over_https_behind_a_trusted_proxy(app_module, monkeypatch,
                                                                     hops, forwarded, secure):
    monkeypatch.setenv("VARIMP_TRUSTED_PROXIES", str(hops))
    response = app_module.server.test_client().get("/_health", headers=forwarded)
    cookie = next(c for c in response.headers.getlist("Set-Cookie")
                  if c.startswith("varimp_client="))
    assert ("Strict-Transport-Security" in response.headers) is secure
    assert ("; Secure" in cookie) is secure, cookie


def test_the_client_address_is_the_proxys_unless_it_is_trusted(monkeypatch):
    from werkzeug.test import EnvironBuilder

    from pages._server.hygiene import TrustedProxy

    seen = []

    def inner(environ, start_response):
        seen.append((environ["REMOTE_ADDR"], environ["wsgi.url_scheme"]))
        return []
    environ = EnvironBuilder(headers={"X-Forwarded-For": "203.0.113.7",
                                      "X-Forwarded-Proto": "https"},
                             environ_base={"REMOTE_ADDR": "10.0.0.1"}).get_environ()
    for hops in ("0", "1"):
        monkeypatch.setenv("VARIMP_TRUSTED_PROXIES", hops)
        TrustedProxy(inner)(dict(environ), lambda *a: None)
    assert seen == [("10.0.0.1", "http"), ("203.0.113.7", "https")], seen


@pytest.mark.parametrize("path", [
    "/_dash-component-suites/nonexistent/x.js", "/_dash-component-suites/dash/x.v1m1.js",
    "/_dash-component-suites/dash/x", "/_dash-component-suites/dash/deps/%2e%2e/x.js"])
def test_a_crafted_component_suite_path_is_a_404(app_module, path):
    response = app_module.server.test_client().get(path)
    assert response.status_code == 404, response.status_code
    assert "Traceback" not in response.get_data(as_text=True)


def test_deeply_nested_json_and_an_unknown_output_are_400s(app_module):
    client = app_module.server.test_client()
    nested = client.post("/_dash-update-component", data="[" * 100_000 + "]" * 100_000,
                         content_type="application/json")
    assert nested.status_code == 400, nested.status_code
    unknown = client.post("/_dash-update-component", json={
        "output": "nonexistent.children", "outputs": {"id": "nonexistent", "property": "children"},
        "inputs": [{"id": "x", "property": "value", "value": 1}], "changedPropIds": []})
    assert unknown.status_code == 400, unknown.status_code
    assert "not one of the app's callbacks" in unknown.get_data(as_text=True)


def test_a_request_that_cannot_reach_redis_answers_its_sentence_not_something_went_wrong():
    """#27.8: with Redis down, a peek (any plain callback reading the shared store) answered
    "Something went wrong"; it now answers 503 with the unreachable-store sentence (which the
    page's script shows), as a job does."""
    code = _FAILING_APP.replace('raise RuntimeError("secret internal detail 4242")',
                                'import redis\n    raise redis.exceptions.ConnectionError('
                                '"Error 111 connecting to 127.0.0.1:6379")')
    proc = _run_python(code)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["status"] == 503
    assert out["body"] == hygiene.STORE_DOWN and "6379" not in out["body"]
    assert hygiene.store_down(RuntimeError("x")) is False
