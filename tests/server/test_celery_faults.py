"""Faults under Celery (issue #17): every lost job ends in a sentence within 10 s.

The test starts Redis (a fixed port, so it can be restarted), ``gunicorn app:server`` with
2 workers and one Celery worker (one pool process), with the default
``VARIMP_JOB_LOST_AFTER`` and a ``VARIMP_SECRET_KEY``.  Jobs are driven over HTTP as
dash-renderer drives them (``tests/_servers.py``): the page's status line is the
``imp-job-status`` side update of the last poll.  The faults are the ones a server meets:
the pool process running the job killed as the OOM killer kills it (``SIGKILL``), Redis
stopped and started again mid-job, a job asked for while Redis is down, a gunicorn worker
restarted after Redis was; and a job over ``VARIMP_MAX_MEMORY_MB`` or ``VARIMP_JOB_TIMEOUT``
gets the sentence a Diskcache job gets.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from _servers import (BIN, DashCallbackClient, Processes, free_port, post_and_poll,
                      serves_health, upload_body, wait)

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
DEADLINE = 10.0  # seconds from the fault to the page's sentence (the requirement)
STOPPED = "The worker computing this view stopped before it finished"
UNREACHABLE = "The server cannot reach its job queue (Redis)"


class _Cluster:
    def __init__(self, tmp: Path):
        self.redis_port = free_port()
        self.url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.env = {**os.environ, "REDIS_URL": self.url, "VARIMP_CACHE_DIR": str(tmp / "cache"),
                    "VARIMP_SECRET_KEY": "test-secret-for-celery-faults", "OMP_NUM_THREADS": "1",
                    "PYTHONUNBUFFERED": "1"}
        self.env.pop("VARIMP_JOB_LOST_AFTER", None)  # the default is what is tested
        self.procs = Processes(tmp, self.env)

    def start_redis(self) -> None:
        import redis

        self.procs.start("redis", [REDIS_SERVER, "--bind", "127.0.0.1", "--port",
                                   str(self.redis_port), "--save", "", "--appendonly", "no"])
        client = redis.Redis.from_url(self.url, socket_timeout=2)

        def up():
            try:
                return client.ping()
            except redis.ConnectionError:
                return False

        wait(up, 10, "redis-server to answer", self.procs.procs["redis"],
             self.procs.logdir / "redis.log")

    def start_worker(self, **env) -> None:
        self.procs.env = {**self.env, **env}
        self.procs.start("worker", [str(BIN / "celery"), "-A", "app:celery_app", "worker",
                                    "-P", "prefork", "-c", "1", "-n", "faults@%h",
                                    "--without-gossip", "--without-mingle", "-l", "INFO"])
        self.procs.env = self.env
        wait(lambda: " ready." in self.procs.log("worker"), 90, "the Celery worker to be ready",
             self.procs.procs["worker"], self.procs.logdir / "worker.log")

    def pool_process(self) -> psutil.Process:
        children = psutil.Process(self.procs.procs["worker"].pid).children()
        assert len(children) == 1, children
        return children[0]

    def client(self) -> DashCallbackClient:
        return DashCallbackClient.over_http(self.base, "imp-graph.figure", "/importances")


@pytest.fixture(scope="module")
def cluster(request):
    if not os.path.exists(REDIS_SERVER):
        pytest.fail("redis-server is required; `make test` installs it.")
    tmp = Path(tempfile.mkdtemp(prefix="varimp-faults-"))
    c = _Cluster(tmp)
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    request.addfinalizer(c.procs.stop_all)
    c.start_redis()
    port = free_port()
    c.procs.start("web", [str(BIN / "gunicorn"), "app:server", "--workers", "2", "--bind",
                          f"127.0.0.1:{port}", "--timeout", "120", "--graceful-timeout", "2"])
    c.base = f"http://127.0.0.1:{port}"
    c.start_worker()
    wait(lambda: serves_health(c.base), 60, "gunicorn to serve /_health", c.procs.procs["web"],
         tmp / "web.log")
    return c


def _values(trees: int, seed: int, problem: str = "xor:irrelevant=8", n: int = 20000) -> dict:
    from pages._framework.datachoice import DataChoice

    data = DataChoice.from_page({"problem": problem, "sampling": "sample", "n": str(n)})[0]
    controls = {"method": "forest", "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3", "n_estimators": trees, "bootstrap": [],
                "random_state": seed, "spread": "se", "order": "columns", "show": "above", "n_permutations": 19}
    # what the page's plain callback writes to the miss store on a cache miss
    return {"imp-miss.data": {"values": controls, "extra": {}, "data": data.to_store()},
            "imp-instance.data": "faults"}


def _status(last: dict) -> str:
    return last["sideUpdate"]["imp-job-status"]["children"]


def _fault_mid_job(cluster, fault, seed: int, when=None,
                   problem: str = "xor:irrelevant=10") -> tuple[str, float, dict]:
    """Start a long job, apply ``fault`` once it reports progress (for which ``when(message)``
    holds, if given); (sentence, seconds, last)."""
    at = {}

    def on_poll(first, progress):
        message = str(progress[-1].get("imp-job-message.children", "")) if progress else ""
        if not at and progress and (when is None or when(message)):
            at["t"] = time.monotonic()
            at["message"] = message
            fault()

    # 10,000 trees on 10 irrelevant bits (4,062 distinct rows): about 15 s of the compiled
    # multiway forest on two lightly loaded cores.  On 8 irrelevant bits (1,024 distinct
    # rows) the kernel grows them in about 3 s, which can end before the first poll's fault.
    _, progress, last = cluster.client().run(_values(10_000, seed, problem),
                                             "imp-miss.data", timeout=90, on_poll=on_poll)
    assert at, f"the job ended before the fault: {progress[-2:]} {str(last)[:500]}"
    waited = time.monotonic() - at["t"]
    print(f"\nfault at {at['message']!r}; {waited:.1f} s later the page says: {_status(last)}")
    return _status(last), waited, last


def test_a_killed_pool_process_ends_the_job_in_a_sentence_within_10_s(cluster):
    """Dash answered HTTP 204 (the bar vanished, the status stayed blank) for ever."""
    sentence, waited, last = _fault_mid_job(
        cluster, lambda: os.kill(cluster.pool_process().pid, signal.SIGKILL), seed=1)
    assert sentence.startswith(STOPPED), sentence
    assert waited < DEADLINE
    assert not last.get("response")  # the figure keeps the previous view


def test_a_pool_process_killed_during_the_verdicts_permutations_ends_the_job_in_a_sentence(
        cluster):
    """The kill lands after the trees, while the label-permutation test regrows forests (seen
    in the browser: 1.6 s to the sentence at "11 of 19 permutations")."""
    sentence, waited, last = _fault_mid_job(
        cluster, lambda: os.kill(cluster.pool_process().pid, signal.SIGKILL), seed=2,
        when=lambda message: "permutations" in message, problem="xor:irrelevant=8")
    assert sentence.startswith(STOPPED), sentence
    assert waited < DEADLINE
    assert not last.get("response")


@pytest.mark.browser
def test_in_chromium_a_killed_pool_process_gives_the_sentence_and_the_controls_back(
        cluster, dash_duo):
    """What the user sees: the bar goes, the status line says why, the controls come back."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = dash_duo.driver
    # 16,369 distinct rows: the 10,000 trees take tens of seconds, so the kill lands while
    # they grow (XOR's 1,024 rows grew them in about a second once the kernels were loaded
    # at the worker's start, and the kill then fell in the verdicts' permutations: three
    # fresh-clone CI runs got no sentence within 30 s)
    driver.get(cluster.base + "/importances?problem=led:noise=0.1,irrelevant=10"
               "&sampling=sample&n=20000&method=forest&trees=10000&tree_seed=31")

    def css(selector):
        return driver.find_element(By.CSS_SELECTOR, selector)

    # the page re-renders the job's elements while it polls: a stale one is looked up again;
    # 180 s for the first page load on CI's two loaded cores (Chromium parses the Plotly
    # bundle first); what is tested is the kill, below
    WebDriverWait(driver, 180, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: "vi-job-running" in css("#imp-job").get_attribute("class")
        and css("#imp-job-progress").get_attribute("value")
        # in the same look: on CI the running class and the disabled controls, read in two
        # looks, were of two renders (the progress came before the controls were disabled)
        and css("#imp-fieldset").get_attribute("disabled"))
    os.kill(cluster.pool_process().pid, signal.SIGKILL)
    killed = time.monotonic()
    WebDriverWait(driver, 30).until(lambda d: css("#imp-job-status").text.strip())
    waited = time.monotonic() - killed
    print(f"\nChromium: the sentence {waited:.1f} s after the kill")
    assert css("#imp-job-status").text.startswith(STOPPED)
    assert waited < DEADLINE
    assert "vi-job-running" not in css("#imp-job").get_attribute("class")
    assert not css("#imp-fieldset").get_attribute("disabled")


def test_a_redis_restart_mid_job_ends_it_in_a_sentence_within_10_s(cluster):
    """Polls keep coming while Redis is away (2 s), as the browser's do."""
    import threading

    restart = threading.Timer(2.0, cluster.start_redis)

    def stop():
        cluster.procs.kill("redis")
        restart.start()

    sentence, waited, last = _fault_mid_job(cluster, stop, seed=2)
    restart.join(30)
    assert sentence.startswith(UNREACHABLE), sentence
    assert waited < DEADLINE
    assert not last.get("response")


def test_a_job_asked_for_while_redis_is_down_ends_in_a_sentence(cluster):
    client = cluster.client()
    cluster.procs.kill("redis")
    try:
        t0 = time.monotonic()
        _, _, last = client.run(_values(50, 3), "imp-miss.data", timeout=30)
        assert _status(last).startswith(UNREACHABLE), last
        assert time.monotonic() - t0 < DEADLINE
    finally:
        cluster.start_redis()


def test_after_a_redis_restart_a_restarted_web_worker_still_runs_jobs(cluster):
    """Dash's signing secret lived in Redis: after a restart, a new web worker signed with a
    new one and 4 to 6 of 8 jobs answered 204.  VARIMP_SECRET_KEY keeps it.

    The jobs are sent once the Celery worker has connected to the new Redis again (its log
    says "Connected to redis" once more): Celery retries with a growing back-off, and on a
    loaded machine the first job had waited 90 s in the queue for it, which is not what this
    test is about.  Once (CI, 2026-11-29) the worker, finishing a task as Redis went, logged
    nothing more for 180 s; the web workers are this test's subject, so a worker that has not
    reconnected in 90 s is restarted (and the log says so)."""
    connected = cluster.procs.log("worker").count("Connected to redis")
    cluster.procs.kill("redis")
    cluster.start_redis()
    try:
        wait(lambda: cluster.procs.log("worker").count("Connected to redis") > connected, 90,
             "the worker to reconnect to Redis", cluster.procs.procs["worker"],
             cluster.procs.logdir / "worker.log")
    except pytest.fail.Exception:
        print("\nthe Celery worker did not reconnect to Redis within 90 s; restarted")
        cluster.procs.kill("worker")
        cluster.start_worker()
    master = psutil.Process(cluster.procs.procs["web"].pid)
    old = {p.pid for p in master.children()}
    for pid in old:
        os.kill(pid, signal.SIGKILL)  # gunicorn starts new workers
    wait(lambda: len({p.pid for p in master.children()} - old) == 2
         and serves_health(cluster.base), 60, "gunicorn's new workers")
    for seed in range(10, 16):  # new page loads: either worker signs, either verifies
        _, _, last = cluster.client().run(_values(30, seed), "imp-miss.data", timeout=90)
        assert last["response"]["imp-job-status"]["children"].startswith("Done in"), last


def test_an_expired_or_unknown_job_handle_ends_in_a_sentence(cluster):
    """A signed handle whose task Redis no longer knows (its result expired, or Redis lost
    it): Dash would poll a PENDING task for ever."""
    from pages._server import celery_jobs, jobs

    manager = jobs._CeleryManager(celery_jobs.make_celery_app(cluster.url, default=False))
    answer = manager.get_result("e" * 64, "0f0f0f0f-0000-4000-8000-000000000000")
    assert answer["background_callback_error"]["msg"].startswith(
        "This job is no longer in the job queue"), answer


@pytest.mark.parametrize("name, limit, problem, n, trees, sentence", [
    ("VARIMP_MAX_MEMORY_MB", "40", "xor:irrelevant=100", 100_000, 10,  # 10 million cells
     "This computation needs more memory than one computation may use on this server (40 MB)"),
    ("VARIMP_JOB_TIMEOUT", "2", "xor:irrelevant=10", 20_000, 10_000,  # ~15 s of trees
     "This computation was stopped after 2 s, the time limit for one computation"),
])
def test_a_job_over_a_limit_gets_the_diskcache_sentence_under_celery(
        cluster, app_module, monkeypatch, name, limit, problem, n, trees, sentence):
    """The same request over ``VARIMP_MAX_MEMORY_MB`` (or ``VARIMP_JOB_TIMEOUT``) in a
    Diskcache job process (this process's manager) and in a Celery task: the same sentence."""
    monkeypatch.setenv(name, limit)
    values = _values(trees, 20, problem, n)
    local = DashCallbackClient.over_flask(app_module.server.test_client(), "imp-graph.figure",
                                          "/importances")
    _, _, there = local.run(values, "imp-miss.data", timeout=120)
    diskcache = there["response"]["imp-error"]["children"]
    assert diskcache.startswith(sentence), there
    cluster.procs.kill("worker")
    cluster.start_worker(**{name: limit})
    try:
        _, _, last = cluster.client().run(values, "imp-miss.data", timeout=120)
    finally:
        cluster.procs.kill("worker")
        cluster.start_worker()
    assert last["response"]["imp-error"]["children"] == diskcache


def test_a_job_no_worker_takes_says_so_within_15_s_and_keeps_waiting(cluster):
    """No worker running (#27.8): Dash showed nothing for the queue's 300 s.  The page's
    progress message says so once the job has waited 15 s, and the job stays queued: a
    worker started then takes it and it ends as any other."""
    from pages._server.celery_jobs import QUEUED_NOTE_AFTER

    cluster.procs.kill("worker")
    seen, started = {}, time.monotonic()

    def on_poll(first, progress):
        message = json.dumps(progress[-1]) if progress else ""  # the message among the
        if "Waiting for a worker" in message and "t" not in seen:    # progress outputs
            seen["t"], seen["message"] = time.monotonic() - started, message
            cluster.start_worker()  # now one comes

    try:
        _, _, last = cluster.client().run(_values(30, 40), "imp-miss.data", timeout=180,
                                          on_poll=on_poll)
    finally:
        if "worker" not in cluster.procs.procs or \
                cluster.procs.procs["worker"].poll() is not None:
            cluster.start_worker()
    assert seen, "the page never said that no worker had taken the job"
    print(f"\nafter {seen['t']:.1f} s the page says: {seen['message']}")
    assert QUEUED_NOTE_AFTER <= seen["t"] <= QUEUED_NOTE_AFTER + DEADLINE
    assert "Cancel" in seen["message"]
    assert last["response"]["imp-job-status"]["children"].startswith("Done in"), last


def test_a_fanned_out_piece_over_the_memory_limit_is_a_memory_error_for_the_caller():
    """A piece is a task of its own (it gets the memory guard too); its MemoryError reaches
    the job as one, so the page says the memory sentence, not 'Something went wrong'."""
    from pages._server import fanout

    from pages._server import guards

    failed = {"exc_type": "MemoryError", "exc_message": [], "exc_module": "builtins"}
    error = fanout.piece_failure("replicate", 3, failed)
    assert isinstance(error, MemoryError)
    assert guards.limit_sentence(error).startswith("This computation needs more memory")
    other = fanout.piece_failure("replicate", 3, {"exc_type": "KeyError"})
    assert isinstance(other, RuntimeError) and guards.limit_sentence(other) is None


def test_the_upload_quota_of_a_celery_job_is_the_browser_that_sent_it(cluster):
    """A Celery task has no request (issue #17): the upload quota is kept per browser because
    the browser's id is read in the request that starts the job.  Two tables of 247 bytes as
    stored (the core's table JSON) under a 400-byte quota: the first browser's second table
    gets the quota's sentence, another browser is served."""
    import requests

    tables = ["x,y\n" + "".join(f"{i % k},{i % 2}\n" for i in range(40)) for k in (3, 5)]
    cluster.procs.kill("worker")
    cluster.start_worker(VARIMP_MAX_CLIENT_UPLOAD_BYTES="400")
    try:
        browsers = [requests.Session(), requests.Session()]
        notes = []
        for browser, table, name in [(browsers[0], tables[0], "a.csv"),
                                     (browsers[0], tables[1], "b.csv"),
                                     (browsers[1], tables[1], "b.csv")]:
            browser.get(cluster.base + "/_health", timeout=30)  # the browser's signed cookie
            deps = browser.get(cluster.base + "/_dash-dependencies", timeout=30).json()
            contents = "data:text/csv;base64," + base64.b64encode(table.encode()).decode()

            def post(query, body, browser=browser):
                r = browser.post(cluster.base + "/_dash-update-component", params=query,
                                 json=body, timeout=30)
                return r.status_code, r.text

            status, text = post_and_poll(post, upload_body(deps, contents, name), timeout=60)
            assert status == 200, text[:300]
            notes.append(json.loads(text)["response"]["data-upload-note"]["children"])
    finally:
        cluster.procs.kill("worker")
        cluster.start_worker()
    assert notes[0] == "a.csv: 40 rows, 2 columns." and notes[2] == "b.csv: 40 rows, 2 columns."
    assert "one browser may keep" in notes[1] and notes[1].endswith("unchanged."), notes
