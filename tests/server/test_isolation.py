"""Two sessions at the same time see only their own data, under gunicorn with 2 workers.

Two real browsers (``dash_duo``'s Chromium and a second one with the same
headless options) use one ``gunicorn app:server --workers 2`` on the
Diskcache manager and a throw-away cache directory.  At the same moments
(a barrier) each uploads its own ``data.csv`` (same file name; different
column names and target relations), opens Importances through the navigation, then the same
forest URL (``/importances?method=forest&...``: no data in it, so the data
comes from each session's store), then Importances again (now from the
shared cache).  Every time, the table must list exactly the session's own
variables with the core's numbers for its own file
(``varimp_core.api.load_data`` + ``compute_importances``) to the 4 decimals
shown; the jobs run as background callbacks in both web workers.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pandas as pd
import pytest
from _pages import grid_cell_selector
from _servers import Processes, start_web
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from varimp_core.api import compute_importances, load_data

ROWS = 400
FOREST = dict(method="forest", trees=40, tree_seed=3)
WAIT = 60  # seconds for one step (two browsers and two workers share the machine's CPUs)


# -- the two tables ---------------------------------------------------------------------------
def _table_a(rng) -> pd.DataFrame:
    """``target_a`` is alpha XOR beta (5 % label noise); gamma is noise."""
    alpha, beta = rng.integers(0, 2, ROWS), rng.integers(0, 2, ROWS)
    flip = rng.random(ROWS) < 0.05
    return pd.DataFrame({"alpha": alpha, "beta": beta, "gamma": rng.integers(0, 3, ROWS),
                         "target_a": np.where((alpha ^ beta) ^ flip, "odd", "even")})


def _table_b(rng) -> pd.DataFrame:
    """``q`` is p3 (10 % noise); p1, p2 and p4 are noise."""
    p3 = rng.integers(0, 3, ROWS)
    noisy = np.where(rng.random(ROWS) < 0.1, rng.integers(0, 3, ROWS), p3)
    return pd.DataFrame({"p1": rng.integers(0, 4, ROWS), "p2": rng.choice(["u", "v"], ROWS),
                         "p3": p3, "p4": rng.integers(0, 2, ROWS),
                         "q": np.array(["lo", "mid", "hi"])[noisy]})


def _shown(value: float) -> str:
    """The table's ``Format(precision=4, scheme=fixed)`` of a number (no negative zero)."""
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


class _Session:
    """One user's file and what the core says about it."""

    def __init__(self, name: str, df: pd.DataFrame, folder: Path):
        # Both files are called data.csv: only their content tells them apart.
        (folder / name).mkdir()
        self.name, self.path = name, folder / name / "data.csv"
        df.to_csv(self.path, index=False)
        self.target = str(df.columns[-1])
        data = load_data(data=str(self.path), target=self.target)
        self.exact = compute_importances(data, method="exact", max_features=1)
        self.forest = compute_importances(
            data, method="forest", max_features=1, n_estimators=FOREST["trees"],
            bootstrap=False, random_state=FOREST["tree_seed"], k_semantics="id3",
            criterion="entropy")
        self.variables = [str(c) for c in df.columns[:-1]]
        assert list(self.exact.variables) == self.variables == list(self.forest.variables)


# -- the server ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def web(request):
    """``gunicorn app:server`` with 2 workers, Diskcache jobs, a throw-away cache."""
    tmp = Path(tempfile.mkdtemp(prefix="varimp-isolation-"))
    env = {**os.environ, "VARIMP_CACHE_DIR": str(tmp / "cache"), "OMP_NUM_THREADS": "1",
           "PYTHONUNBUFFERED": "1"}
    env.pop("REDIS_URL", None)
    procs = Processes(tmp, env)
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    request.addfinalizer(procs.stop_all)
    # The access log names the worker (pid) that served each request.
    base = start_web(procs, workers=2, extra=("--access-logfile", "-", "--access-logformat",
                                              "access pid=%(p)s %(m)s %(U)s %(s)s"))
    return {"base": base, "procs": procs}


@pytest.fixture
def second_browser(request):
    """A second Chromium with conftest's options (as dash_duo's), console logs kept."""
    options = request.config.hook.pytest_setup_options()[0]
    options.add_argument("--remote-debugging-port=0")
    options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
    driver = webdriver.Chrome(options=options)
    yield driver
    driver.quit()


# -- browser steps ------------------------------------------------------------------------------
def _until(driver, condition, what: str, wait: float = WAIT):
    return WebDriverWait(driver, wait, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: condition(d), message=f"waited {wait} s for {what}")


def _fresh(read):
    """``read()`` again when React replaced an element while it was being read."""
    for _ in range(20):
        try:
            return read()
        except StaleElementReferenceException:
            time.sleep(0.05)
    return read()


def _text(driver, selector: str) -> str:
    def read():
        elements = driver.find_elements(By.CSS_SELECTOR, selector)
        return elements[0].text if elements else ""
    return _fresh(read)


def _cells(driver, column: str) -> list[str]:
    """The grid's shown cells of ``column``, top to bottom (read in one script)."""
    texts = driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".sort((a, b) => +a.parentElement.getAttribute('row-index')"
        " - +b.parentElement.getAttribute('row-index'))"
        ".map(c => c.innerText.trim());", grid_cell_selector("#imp-table", column))
    return [t.replace("\u2212", "-") for t in texts]


def _job_done(driver, prefix: str) -> bool:
    def read():
        panel = driver.find_elements(By.ID, f"{prefix}-job")
        return bool(panel) and "vi-job-running" not in panel[0].get_attribute("class")
    return _fresh(read)


def _read_importances(driver) -> dict:
    """Wait for the Importances job to finish; then what the table shows."""
    _until(driver, lambda d: "Done" in _text(d, "#imp-job-status"), "the importances job")
    assert _text(driver, "#imp-error") == ""
    _until(driver, lambda d: _cells(d, "variable"), "the importances grid")
    return {"variables": _cells(driver, "variable"), "importance": _cells(driver, "importance")}


def _check(shown: dict, session: _Session, result, when: str) -> None:
    assert shown["variables"] == session.variables, (session.name, when, shown)
    assert shown["importance"] == [_shown(v) for v in result.importances], \
        (session.name, when, shown)


def _run_session(driver, base: str, session: _Session, barrier: threading.Barrier) -> dict:
    """Upload, then three views of Importances; returns the tables shown."""
    seen = {}
    driver.get(base + "/data")
    # The first page load parses the Plotly bundle: up to 2 × WAIT under CI's load.
    _until(driver, lambda d: _text(d, "#data-summary-p") == "7", "the default data", 2 * WAIT)
    driver.find_element(By.CSS_SELECTOR, "#data-source input[value='upload']").click()

    barrier.wait(WAIT)  # both upload at the same time
    driver.find_element(By.CSS_SELECTOR, "#data-upload input[type='file']").send_keys(
        str(session.path))
    _until(driver, lambda d: f"{ROWS:,} rows" in _text(d, "#data-upload-note"), "the upload")
    _until(driver, lambda d: f"Target {session.target}" in _text(d, "#data-summary-exact"),
           "the summary of the upload")
    _until(driver, lambda d: _job_done(d, "data"), "the data job")
    assert _text(driver, "#data-summary-p") == str(len(session.variables))

    barrier.wait(WAIT)  # both open Importances through the navigation at the same time
    driver.find_element(By.LINK_TEXT, "Importances").click()
    _until(driver, lambda d: urlsplit(d.current_url).path == "/importances", "Importances")
    seen["exact"] = _read_importances(driver)

    barrier.wait(WAIT)  # the same URL in both sessions: the data comes from each session
    driver.get(base + "/importances?method={method}&trees={trees}&tree_seed={tree_seed}"
               .format(**FOREST))
    seen["forest"] = _read_importances(driver)

    barrier.wait(WAIT)  # again, now read from the shared cache
    driver.get(base + "/importances")
    seen["cached"] = _read_importances(driver)
    seen["logs"] = [e for e in driver.get_log("browser")]
    return seen


# -- the test ---------------------------------------------------------------------------------
@pytest.mark.browser
def test_two_sessions_at_once_see_only_their_own_data(web, dash_duo, second_browser, tmp_path):
    rng = np.random.default_rng(20240607)
    a = _Session("session_a", _table_a(rng), tmp_path)
    b = _Session("session_b", _table_b(rng), tmp_path)
    assert not set(a.variables) & set(b.variables)
    # The relations differ: A's information is in alpha and beta, B's in p3.
    assert set(np.argsort(a.exact.importances)[-2:].tolist()) == {0, 1}
    assert int(np.argmax(b.exact.importances)) == 2

    barrier = threading.Barrier(2)
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(_run_session, driver, web["base"], session, barrier)
                   for name, driver, session in (("a", dash_duo.driver, a),
                                                 ("b", second_browser, b))}
        errors = {}
        for name, future in futures.items():
            try:
                future.result(timeout=10 * WAIT)
            except Exception as exc:  # report both sessions' failures
                errors[name] = exc
                barrier.abort()
        assert not errors, errors
    seen = {name: future.result() for name, future in futures.items()}

    for session, shown in ((a, seen["a"]), (b, seen["b"])):
        _check(shown["exact"], session, session.exact, "exact, through the navigation")
        _check(shown["forest"], session, session.forest, "forest, same URL in both sessions")
        _check(shown["cached"], session, session.exact, "exact again, from the cache")
        assert shown["logs"] == []
    # Both web workers served the sessions' callbacks (and so started and polled jobs).
    log = web["procs"].log("web")
    assert "Traceback" not in log, log[-3000:]
    workers = set(re.findall(r"access pid=<?(\d+)>? POST /_dash-update-component 200", log))
    assert len(workers) == 2, log[-3000:]
