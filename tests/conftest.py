"""Shared test setup: a private cache directory, headless Chromium for dash_duo, the app.

Browser tests (``@pytest.mark.browser``) use dash[testing]'s ``dash_duo`` with
Debian's Chromium and chromedriver; they are never skipped: a missing browser
is an error (``make test`` installs it).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Before anything imports the app: results and uploads of the test run go to a
# throw-away cache, never to a developer's or another run's.
_CACHE_DIR = tempfile.mkdtemp(prefix="varimp-test-cache-")
os.environ["VARIMP_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("REDIS_URL", None)  # background jobs run on diskcache in tests
os.environ.pop("VARIMP_CACHE_URL", None)  # so does the cache, but for `cache_backend`
os.environ["VARIMP_WARM"] = "0"  # no page computes its defaults at start (test_page_measures)
# Every upload a test makes outside a browser request counts against one client ("-"); the
# whole run would fill its 256 MiB quota.  tests/server/test_retention.py sets its own quota.
os.environ["VARIMP_MAX_CLIENT_UPLOAD_BYTES"] = str(64 << 30)
os.environ["VARIMP_UPLOAD_STORE_BYTES"] = str(64 << 30)  # and every client's together
# Every test's server takes its requests from 127.0.0.1: the run is one address uploading
# and starting jobs far faster than a person.  tests/server/test_ratelimit.py sets its own.
os.environ["VARIMP_UPLOAD_RATE"] = "1000000 per minute"
os.environ["VARIMP_UPLOAD_MIB_RATE"] = "1000000 per minute"
os.environ["VARIMP_JOB_RATE"] = "1000000 per minute"

CHROMIUM = os.environ.get("VARIMP_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("VARIMP_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)

# selenium 4.2 finds chromedriver on PATH: put Debian's first.
_driver_dir = os.path.dirname(CHROMEDRIVER)
if _driver_dir and _driver_dir not in os.environ.get("PATH", "").split(os.pathsep)[:1]:
    os.environ["PATH"] = _driver_dir + os.pathsep + os.environ.get("PATH", "")


def pytest_setup_options():
    """dash[testing] hook: Chrome options for every browser fixture."""
    from selenium.webdriver.chrome.options import Options

    options = Options()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    return options


# The files that take a minute or more, longest first (measured with --durations).  Under
# `make test` (pytest-xdist, a file per process, in collection order) they start first, so
# that no long file is left running alone at the end while the other process has finished.
_LONG_FILES = ("browser/test_layout.py", "core/exact/test_binary.py",
               "browser/test_screenshots.py", "server/test_scaleout.py",
               "core/studies/test_selection.py", "server/test_memory.py",
               "framework/test_hostile_uploads.py", "pages/test_learn.py",
               "pages/test_distributions.py", "pages/test_measures.py",
               "pages/test_selection.py", "server/test_celery_faults.py",
               "server/test_lost_jobs.py", "server/test_isolation.py",
               "core/exact/test_moments.py", "pages/test_explain.py",
               "core/local/test_local_binary.py", "core/exact/test_binary_regression.py",
               "pages/test_importances_verdicts.py")


def pytest_collection_modifyitems(config, items):
    """Long files first (a stable sort: every other test keeps its order)."""
    rank = {name: i for i, name in enumerate(_LONG_FILES)}
    here = Path(__file__).resolve().parent
    items.sort(key=lambda item: rank.get(item.path.resolve().relative_to(here).as_posix(),
                                         len(rank)))


def _xdist_controller(config) -> bool:
    """True in pytest-xdist's controller, which runs no test: its children are the workers."""
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def pytest_sessionfinish(session, exitstatus):
    if not _xdist_controller(session.config):
        _kill_leftover_jobs()
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)
    _exit_status.append(int(exitstatus))


_exit_status: list[int] = []


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """Leave as soon as the run is reported, with its exit status.

    The interpreter's exit joins the child processes and threads that libraries
    started (joblib's workers, ``multiprocess`` jobs of the test servers); one of
    them stuck once held a finished CI run open until it was killed, turning a
    reported result into a time-out.  Whatever is still alive is named first.
    """
    if not _exit_status or hasattr(config, "workerinput"):
        return  # an xdist worker ends as xdist says: its controller ends the run as below
    import sys
    import threading

    import psutil

    alive = [f"{p.name()}[{p.pid}]" for p in psutil.Process().children(recursive=True)]
    threads = [t.name for t in threading.enumerate()
               if t is not threading.main_thread() and not t.daemon]
    if alive or threads:
        print(f"[conftest] exiting past {len(alive)} process(es) {alive} and "
              f"{len(threads)} thread(s) {threads}")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_exit_status[-1])


def _kill_leftover_jobs() -> None:
    """Kill background-job processes the test servers left behind.

    Python's exit joins every child process started by ``multiprocess``; one
    job still running (or stuck) would hold the whole run open long after the
    last test.  Chromium and chromedriver are gone by now; anything left is a job.
    """
    import psutil

    left, names = [], []
    for proc in psutil.Process().children(recursive=True):
        try:
            if any(w in part for part in proc.cmdline()
                   for w in ("loky", "joblib", "resource_tracker")):
                continue  # joblib workers and resource trackers end by themselves
            names.append(f"{proc.name()}[{proc.pid}]")
            proc.kill()
            left.append(proc)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(left, timeout=5)
    if names:
        print(f"\n[conftest] killed {len(names)} leftover process(es): {', '.join(names)}")


@pytest.fixture(autouse=True)
def _browser_present(request):
    """Browser tests fail (never skip) when Chromium or chromedriver is missing."""
    if request.node.get_closest_marker("browser") and not (
            os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.fail(f"Chromium ({CHROMIUM}) and chromedriver ({CHROMEDRIVER}) are required "
                    "for browser tests; `make test` installs them.")


@pytest.fixture(scope="session")
def app_module():
    """The ``app`` module (``app``, ``server``), imported once per session.

    Dash's page registry and callback list are process-wide, so the app is
    built once and shared by every test.
    """
    import app as module

    return module


@pytest.fixture(scope="session")
def dash_app(app_module):
    """The Dash app object of ``app.py``."""
    return app_module.app


@pytest.fixture(autouse=True)
def _own_server_port():
    """Each browser test's server on a port free now, so two test runs side by side never
    meet (dash[testing] counts up from a fixed 58050 in every process)."""
    from dash.testing.application_runners import BaseDashRunner
    from _servers import free_port

    BaseDashRunner._next_port = free_port()
    yield


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A redis-server of the session's own, on a free port; stopped at the end."""
    from pathlib import Path

    from _servers import Processes, start_redis

    procs = Processes(Path(tmp_path_factory.mktemp("redis")), dict(os.environ))
    try:
        yield start_redis(procs)
    finally:
        procs.stop_all()


@pytest.fixture(params=["diskcache", "redis"])
def cache_backend(request, monkeypatch):
    """Runs a test on each store of ``pages._server.cache``: diskcache, then Redis (emptied)."""
    if request.param == "redis":
        import redis

        url = request.getfixturevalue("redis_url")
        redis.Redis.from_url(url).flushdb()
        monkeypatch.setenv("VARIMP_CACHE_URL", url)
    return request.param
