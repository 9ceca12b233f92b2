"""A Diskcache job that dies, hangs or waits on a stuck computation ends in a sentence.

Dash's own manager answers "no update" for ever when a job's process is gone
without a result; these tests drive the app's manager with real processes.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from pages._server import cache, guards, jobs


@pytest.fixture
def manager(tmp_path, monkeypatch):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    made, _celery = jobs.make_manager()
    return made


def _error_sentence(value) -> str:
    assert isinstance(value, dict), value
    return value["background_callback_error"]["msg"]


def _importances_job(trees: int, seed: int, n: int = 5000, problem: str = "xor:irrelevant=8",
                     instance: str = "test") -> dict:
    """What the Importances page's plain callback writes to its miss store: a forest job of
    ``trees`` trees on a sample of ``n`` rows of ``problem``."""
    from pages._framework.datachoice import DataChoice

    data = DataChoice.from_page({"problem": problem, "sampling": "sample", "n": str(n)})[0]
    controls = {"method": "forest", "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3", "n_estimators": trees, "bootstrap": [],
                "random_state": seed, "spread": "se", "order": "columns", "show": "above", "n_permutations": 19}
    return {"imp-miss.data": {"values": controls, "extra": {}, "data": data.to_store()},
            "imp-instance.data": instance}


def test_a_job_whose_process_died_without_a_result_ends_in_a_sentence(manager):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # gone, as after the OOM killer
    sentence = _error_sentence(manager.get_result("k" * 64, str(proc.pid)))
    assert sentence.startswith("The process computing this view stopped before it finished")


def test_a_job_killed_by_a_cancel_is_not_reported_as_lost(manager):
    """Cancel (or a view drawn from the cache since) kills the job; a poll still in flight
    must not then say the process "stopped before it finished" over the page's status."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    manager.terminate_job(str(proc.pid))  # what Dash calls when a cancel input fires
    proc.wait(10)
    assert manager.get_result("c" * 64, str(proc.pid)) is manager.UNDEFINED


def test_a_finished_job_returns_its_result_not_an_error(manager):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    manager.handle.set("r" * 64, ["figure"])
    assert manager.get_result("r" * 64, str(proc.pid)) == ["figure"]


def test_a_running_job_within_its_limit_is_left_alone(manager):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert manager.get_result("w" * 64, str(proc.pid)) is manager.UNDEFINED
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_a_job_alive_past_its_limit_is_killed_with_the_time_limit_sentence(manager, monkeypatch):
    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "1")
    monkeypatch.setattr(guards, "GRACE", 0.0)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    time.sleep(1.5)
    sentence = _error_sentence(manager.get_result("h" * 64, str(proc.pid)))
    assert sentence.startswith("This computation was stopped after 1 s, the time limit")
    proc.wait(timeout=10)  # killed (and reaped by the manager): far sooner than its 60 s


def _stuck_where_no_alarm_reaches():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # the alarm never arrives
    time.sleep(60)


def _run_guarded():
    guards.GRACE = 1.0
    os.environ["VARIMP_JOB_TIMEOUT"] = "1"
    guards.GuardedJob(_stuck_where_no_alarm_reaches)()


def test_the_watchdog_kills_a_job_the_alarm_cannot_stop():
    proc = multiprocessing.get_context("fork").Process(target=_run_guarded)
    proc.start()
    proc.join(30)
    assert proc.exitcode == -signal.SIGKILL  # within the 30 s join: 60 s of sleep cut short


def test_a_waiting_caller_reports_while_another_process_holds_the_lock(tmp_path, monkeypatch):
    """The wait calls ``on_wait`` (a job's progress report, which raises once its page was
    left), so a job waiting on another's computation can be stopped."""
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    key = cache.key_for("test-wait", 1)
    holder = f"{socket.gethostname()}:{os.getppid()}"  # a live process of this machine
    cache.get_cache().add(f"lock:{key}", holder, expire=60)
    calls = []

    class Left(Exception):
        pass

    def on_wait():
        calls.append(1)
        if len(calls) == 3:
            raise Left

    with pytest.raises(Left):
        cache.get_or_compute(key, lambda: pytest.fail("computed under another's lock"),
                             on_wait=on_wait)
    assert len(calls) == 3


def test_a_celery_task_gets_the_memory_guard_and_its_process_gets_it_back(monkeypatch):
    """Issue #17: the memory limit held only under Diskcache. A Celery pool process runs one
    task after another: the limit is set as the task starts and lifted as it ends."""
    import resource
    from types import SimpleNamespace

    from pages._server import celery_jobs

    monkeypatch.setenv("VARIMP_MAX_MEMORY_MB", "150")
    sent = {}
    client = SimpleNamespace(set=lambda key, value, px: sent.update({key: value}),
                             delete=lambda key: sent.pop(key, None))
    task = SimpleNamespace(name="background_callback_x",
                           backend=SimpleNamespace(client=client))

    def run_in_child(queue):
        before = resource.getrlimit(resource.RLIMIT_AS)[0]
        celery_jobs._start_heartbeat(task_id="t1", task=task, args=["key"])
        during = resource.getrlimit(resource.RLIMIT_AS)[0]
        try:
            bytearray(400 * 2**20)  # 400 MB: over the 150 MB a job may add
            over = "allocated"
        except MemoryError:
            over = "MemoryError"
        celery_jobs._stop_heartbeat(task_id="t1", task=task)
        queue.put((before, during, over, resource.getrlimit(resource.RLIMIT_AS)[0]))

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=run_in_child, args=(queue,))
    proc.start()
    before, during, over, after = queue.get(timeout=30)
    proc.join(10)
    assert during != resource.RLIM_INFINITY and over == "MemoryError"
    assert after == before
    assert guards.limit_sentence(MemoryError()).startswith("This computation needs more memory")


def test_a_browser_over_its_job_cap_gets_a_sentence_and_no_process(app_module, monkeypatch):
    """Issue #17: one client ran 6 jobs at once as 6 processes.  With a cap of 1, the second
    job of the same browser (its varimp_client cookie) ends at its first poll with a sentence;
    another browser still gets its job."""
    import psutil
    from _servers import DashCallbackClient

    monkeypatch.setenv("VARIMP_MAX_JOBS_PER_CLIENT", "1")
    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "8")  # the long job ends by itself

    def values(trees):
        return _importances_job(trees, 4242)

    browser = DashCallbackClient.over_flask(app_module.server.test_client(), "imp-graph.figure",
                                            "/importances")
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    long = browser.body(values(10_000), "imp-miss.data")
    first = browser.post(long)                       # runs (up to its 8 s limit)
    assert first["job"].split("~")[0] != "refused"
    _, _, last = browser.run(values(9_999), "imp-miss.data", timeout=10)
    sentence = last["sideUpdate"]["imp-job-status"]["children"]
    assert sentence.startswith("This browser already runs 1 computations on this server")
    assert "imp-graph" not in last.get("response", {})
    started = {p.pid for p in psutil.Process().children(recursive=True)} - before
    assert len(started) <= 1  # the refused job has no process
    other = DashCallbackClient.over_flask(app_module.server.test_client(), "imp-graph.figure",
                                          "/importances")
    assert other.post(other.body(values(9_998), "imp-miss.data"))["job"].split("~")[0] \
        != "refused"


def test_made_up_client_cookies_do_not_lift_the_job_cap(app_module, monkeypatch):
    """Issue #17: the cap trusted the varimp_client cookie, so a client sending a fresh value
    with each request ran any number of jobs.  A value the server did not sign names no
    browser: such requests share their address's cap (here 1: one job, then refusals)."""
    import secrets

    from _servers import DashCallbackClient

    from pages._server.hygiene import CLIENT_COOKIE

    monkeypatch.setenv("VARIMP_MAX_JOBS_PER_CLIENT", "1")
    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "8")  # the long job ends by itself
    flask_client = app_module.server.test_client()
    page = DashCallbackClient.over_flask(flask_client, "imp-graph.figure", "/importances")
    issued = flask_client.get_cookie(CLIENT_COOKIE).value
    token, _, mac = issued.partition(".")
    assert len(token) == 32 and len(mac) == 32  # 128 random bits and the server's signature
    jobs_started = []
    for trees in (10_000, 9_999, 9_998):
        flask_client.set_cookie(CLIENT_COOKIE, secrets.token_hex(16))  # made up each time
        body = page.body(_importances_job(trees, 4343), "imp-miss.data")
        jobs_started.append(page.post(body)["job"].split("~")[0] != "refused")
    assert jobs_started == [True, False, False]
    flask_client.set_cookie(CLIENT_COOKIE, token + "." + "0" * 32)  # a forged signature
    assert page.post(body)["job"].split("~")[0] == "refused"


def test_a_poll_with_a_handle_this_server_did_not_sign_gets_a_sentence(app_module):
    """Dash reads nothing for such a poll and answered HTTP 204: the bar vanished in silence
    (as after a restart with a new signing secret)."""
    from _servers import DashCallbackClient

    page = DashCallbackClient.over_flask(app_module.server.test_client(), "imp-graph.figure",
                                         "/importances")
    body = page.body(_importances_job(5, 7, n=500), "imp-miss.data")
    first = page.post(body)
    forged = {k: first[k].rpartition("~")[0] + "~" + "0" * 10 for k in ("cacheKey", "job")}
    answer = page.post(body, **forged)
    assert answer["sideUpdate"]["imp-job-status"]["children"].startswith(
        "This computation can no longer be followed")
    assert "response" not in answer or "imp-graph" not in answer["response"]


def test_a_job_that_ends_between_a_polls_two_looks_is_drawn_by_the_next_poll(app_module,
                                                                             monkeypatch):
    """A poll reads the job's result, then Dash asks whether the job still runs.  A job that
    ended in between (a quick job, a loaded server: CI of stop 21, under Celery) was "not
    running and no result", which Dash takes for a cancelled job: the poll ended the
    callback with no update, and the page never drew the result.  Here every first look of
    a job waits until its process has ended; the next poll must bring the figure."""
    import psutil
    from _servers import DashCallbackClient

    look = jobs._DiskcacheManager.get_result
    raced = []

    def get_result_then_let_the_job_end(self, key, job):
        result = look(self, key, job)
        if result is self.UNDEFINED and str(job).isdigit() and not raced:
            try:
                process = psutil.Process(int(job))
                deadline = time.monotonic() + 60
                while (process.status() != psutil.STATUS_ZOMBIE
                       and time.monotonic() < deadline):
                    time.sleep(0.05)
            except psutil.NoSuchProcess:
                pass
            raced.append(job)
        return result

    monkeypatch.setattr(jobs._DiskcacheManager, "get_result", get_result_then_let_the_job_end)
    page = DashCallbackClient.over_flask(app_module.server.test_client(), "imp-graph.figure",
                                         "/importances")
    _, _, last = page.run(_importances_job(7, 4545, n=300, problem="xor:irrelevant=2",
                                           instance="race"), "imp-miss.data", timeout=90)
    assert raced, "no poll looked before the job ended"
    response = last.get("response") or {}
    assert str(response.get("imp-job-status", {}).get("children")).startswith("Done in"), last
    assert [bar["x"] for bar in response["imp-graph"]["figure"]["data"][:1]] == \
        [["X1", "X2", "X3", "X4"]]


# -- #27.2: a job that stalls as it starts is reported within 10 s, with a true sentence -----
def _hang_at_start():
    time.sleep(120)  # where a lock inherited locked at the fork (SQLite's) held a job


def _guarded_job_that_hangs_as_it_starts():
    guards.GuardedJob(lambda: None, started=_hang_at_start)()


def test_a_job_that_never_reports_its_start_is_stopped_within_10_s(manager, monkeypatch):
    monkeypatch.setenv("VARIMP_JOB_START_TIMEOUT", "3")
    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "600")  # the old report: at 630 s
    proc = multiprocessing.get_context("fork").Process(target=_guarded_job_that_hangs_as_it_starts)
    proc.start()
    begun, answer = time.monotonic(), manager.UNDEFINED
    while answer is manager.UNDEFINED and time.monotonic() - begun < 15:
        time.sleep(0.2)
        answer = manager.get_result("s" * 64, str(proc.pid))
    waited = time.monotonic() - begun
    proc.join(10)
    print(f"stalled job reported after {waited:.1f} s")
    assert waited < 10, waited
    sentence = _error_sentence(answer)
    assert sentence.startswith("The process computing this view hung as it started"), sentence
    assert "memory" not in sentence
    import psutil

    assert not psutil.pid_exists(proc.pid) or \
        psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE  # its process was ended


def _guarded_job_that_starts_then_works():
    from pages._server import jobs as job_module

    guards.GuardedJob(lambda: time.sleep(120), started=job_module._report_start)()


def test_a_started_job_past_the_start_timeout_is_left_alone(manager, monkeypatch):
    monkeypatch.setenv("VARIMP_JOB_START_TIMEOUT", "1")
    proc = multiprocessing.get_context("fork").Process(target=_guarded_job_that_starts_then_works)
    proc.start()
    try:
        time.sleep(2.5)
        assert manager.get_result("t" * 64, str(proc.pid)) is manager.UNDEFINED
        assert proc.is_alive()
    finally:
        proc.kill()
        proc.join(10)


def test_a_job_the_watchdog_killed_is_reported_at_its_time_limit_not_for_memory(manager):
    proc = multiprocessing.get_context("fork").Process(target=_run_guarded)
    proc.start()
    proc.join(30)
    assert proc.exitcode == -signal.SIGKILL
    sentence = _error_sentence(manager.get_result("d" * 64, str(proc.pid)))
    assert sentence.startswith("This computation was stopped after 1 s, the time limit"), sentence


def test_a_process_gone_without_a_reason_is_not_said_to_have_run_out_of_memory(manager):
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    sentence = _error_sentence(manager.get_result("m" * 64, str(proc.pid)))
    assert "memory" not in sentence, sentence


def test_a_job_starts_from_a_single_threaded_fork_server_with_the_current_environment(
        app_module, monkeypatch):
    """#27.1: a job forked from a threaded web process could inherit SQLite's mutex locked.
    A job runs in a child of a process with one thread (the fork server, started before
    this job), not of this multi-threaded process, and obeys a limit set after that server
    began (a 1 s time limit: the job's sentence names it)."""
    import json
    import threading

    import psutil
    from _servers import DashCallbackClient

    from pages._server import job_host

    job_host.start()
    threading.Thread(target=time.sleep, args=(5,), daemon=True).start()  # a threaded parent
    assert threading.active_count() > 1
    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "1")
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    browser = DashCallbackClient.over_flask(app_module.server.test_client(), "imp-graph.figure",
                                            "/importances")
    body = browser.body(_importances_job(10_000, 777), "imp-miss.data")
    first = browser.post(body)
    pid = int(first["job"].split("~")[0])
    host = psutil.Process(pid).parent()
    assert host.pid != os.getpid() and host.pid in before
    assert host.num_threads() == 1
    _, _, last = browser.run(_importances_job(9_999, 778), "imp-miss.data", timeout=60)
    assert "stopped after 1 s, the time limit" in json.dumps(last), last


# -- #27.2: a started job that stops making progress is reported within 10 s ----------------
def _started_job(body, result_key: str | None = None, store: str | None = None):
    """A job process as the manager starts one (its key, its start reported), running
    ``body(progress)``; its return value, if any, is stored under ``result_key`` in the
    manager's store (folder ``store``)."""
    from pages._server import jobs as job_module
    from pages._server.job_signals import start_job

    def run(key):
        value = body(job_module.Progress(None))
        if result_key is not None:
            import diskcache

            diskcache.Cache(store).set(result_key, value)

    guards.GuardedJob(run, on_start=start_job, started=job_module._report_start)("job-key")


def _reports_then_blocks(progress):
    progress(1, 10)
    import threading

    threading.Event().wait(600)  # stuck on a lock: alive, no report, no processor time


def _burns_without_reports(progress):
    progress(1, 10)
    deadline, x = time.monotonic() + 12, 0
    while time.monotonic() < deadline:  # a long fit in numba: no progress call
        x += 1
    return ["burnt", x > 0]


def _sleeps_with_reports(progress):
    for i in range(12):
        progress(i, 12)
        time.sleep(1)
    return ["reported"]


def _start(target, *args):
    proc = multiprocessing.get_context("fork").Process(target=_started_job, args=(target, *args))
    proc.start()
    return proc


def _poll(manager, key, proc, seconds):
    """Poll as the page does (every 0.2 s) until the job answers or ``seconds`` pass."""
    begun, answer = time.monotonic(), manager.UNDEFINED
    while answer is manager.UNDEFINED and time.monotonic() - begun < seconds:
        time.sleep(0.2)
        answer = manager.get_result(key, str(proc.pid))
    return answer


def test_a_started_job_that_stops_making_progress_is_stopped_within_10_s(manager, monkeypatch):
    import psutil

    from pages._server import job_signals

    monkeypatch.delenv("VARIMP_JOB_STALL_AFTER", raising=False)  # the default: 6 s
    monkeypatch.setenv("VARIMP_JOB_TIMEOUT", "600")  # before: reported at 630 s
    proc = _start(_reports_then_blocks)
    answer = _poll(manager, "i" * 64, proc, 25)
    told = time.time()
    if answer is manager.UNDEFINED:
        proc.kill()
        pytest.fail("a started job blocked without progress was not reported within 25 s")
    last = job_signals.last_report(proc.pid)
    proc.join(10)
    assert last is not None, "the job never reported"
    print(f"stalled job reported {told - last:.1f} s after its last report")
    assert told - last < 10, told - last
    sentence = _error_sentence(answer)
    assert sentence.startswith("The process computing this view stopped making progress "
                               "(no report and no processor time for 6 s)"), sentence
    assert "memory" not in sentence
    assert not psutil.pid_exists(proc.pid) or \
        psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE  # its process was ended
    # Its recorded reason: a later look at the gone process says the same, not "died".
    assert jobs._lost_or_overdue(str(proc.pid)) == sentence


def test_a_job_that_computes_without_reporting_is_not_taken_for_stuck(manager, monkeypatch):
    monkeypatch.delenv("VARIMP_JOB_STALL_AFTER", raising=False)
    proc = _start(_burns_without_reports, "b" * 64, manager.handle.directory)
    try:
        answer = _poll(manager, "b" * 64, proc, 40)
    finally:
        proc.join(30)
    assert answer == ["burnt", True], answer


def test_a_job_that_waits_but_reports_every_second_is_not_taken_for_stuck(manager,
                                                                          monkeypatch):
    monkeypatch.delenv("VARIMP_JOB_STALL_AFTER", raising=False)
    monkeypatch.setattr(jobs, "IDLE_CPU", 1e9)  # its reports alone keep it
    proc = _start(_sleeps_with_reports, "p" * 64, manager.handle.directory)
    try:
        answer = _poll(manager, "p" * 64, proc, 40)
    finally:
        proc.join(30)
    assert answer == ["reported"], answer


def test_the_stall_limit_is_a_bounded_server_limit(monkeypatch):
    from pages._server import limits

    monkeypatch.delenv("VARIMP_JOB_STALL_AFTER", raising=False)
    assert limits.job_stall_after() == 6
    monkeypatch.setenv("VARIMP_JOB_STALL_AFTER", "3")
    assert limits.job_stall_after() == 3
    monkeypatch.setenv("VARIMP_JOB_STALL_AFTER", "100000")
    assert limits.job_stall_after() == 60
    monkeypatch.setenv("VARIMP_JOB_STALL_AFTER", "-1")
    assert limits.job_stall_after() == 6


def _waits_for_another_process(progress):
    """``cache.get_or_compute`` with no ``on_wait`` (as the views' own computation calls it)
    while another process computes the same value."""
    progress(1, 10)
    return cache.get_or_compute(cache.key_for("test-stall-wait", 1),
                                lambda: ["computed here: the lock was not respected"])


def test_a_job_waiting_for_another_process_computing_the_same_value_is_left_alone(
        manager, monkeypatch):
    import json

    monkeypatch.delenv("VARIMP_JOB_STALL_AFTER", raising=False)
    monkeypatch.setattr(jobs, "IDLE_CPU", 1e9)  # its looks' processor time does not save it
    key = cache.key_for("test-stall-wait", 1)
    holder = f"{socket.gethostname()}:{os.getpid()}"  # this process computes it, for 12 s
    cache.get_cache().add(f"lock:{key}", holder, expire=60)
    proc = _start(_waits_for_another_process, "a" * 64, manager.handle.directory)
    try:
        begun = time.monotonic()
        while time.monotonic() - begun < 12:
            time.sleep(0.2)
            assert manager.get_result("a" * 64, str(proc.pid)) is manager.UNDEFINED
        cache.get_cache().set(key, json.dumps(["computed by the other process"]))
        cache.get_cache().delete(f"lock:{key}")
        answer = _poll(manager, "a" * 64, proc, 20)
    finally:
        proc.join(30)
    assert answer == ["computed by the other process"], answer


# -- #27.2 under Celery: the worker's heartbeat applies the same stall rule ------------------
def _celery_job_in_child(record: str, then: str) -> None:
    """A pool process running a Dash job (the worker's signal handler as Celery calls it), with
    a Redis client that writes to ``record``; the job reports once, then ``then``."""
    from types import SimpleNamespace

    from pages._server import celery_jobs, job_signals

    def put(key, value, px=None):
        with open(record, "a") as out:
            out.write(json.dumps([key, value]) + "\n")

    client = SimpleNamespace(set=put, delete=lambda key: None)
    task = SimpleNamespace(name="background_callback_x", backend=SimpleNamespace(client=client))
    celery_jobs._start_heartbeat(task_id="t-stall", task=task, args=["k" * 64])
    job_signals.mark_progress()
    if then == "blocks":
        threading.Event().wait(60)                      # stuck on a lock: no report, no CPU
    elif then == "burns":
        deadline, x = time.monotonic() + 10, 0
        while time.monotonic() < deadline:                # a fit that never reports
            x += 1
    else:
        for _ in range(10):                               # waits, reporting every second
            time.sleep(1)
            job_signals.mark_progress()
    celery_jobs._stop_heartbeat(task_id="t-stall", task=task)
    put("finished", then)


def _run_celery_child(tmp_path, then: str, seconds: float):
    record = tmp_path / f"redis-{then}.jsonl"
    record.touch()
    proc = multiprocessing.get_context("fork").Process(target=_celery_job_in_child,
                                                       args=(str(record), then))
    begun = time.monotonic()
    proc.start()
    proc.join(seconds)
    took = time.monotonic() - begun
    if proc.is_alive():
        proc.kill()
        proc.join(5)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    return proc, dict(lines), took


def test_a_celery_job_that_stops_making_progress_is_stopped_within_10_s(tmp_path, monkeypatch):
    """Under Celery the heartbeat thread beat on whatever the job did, so a job stuck on a
    lock was alive until its time limit (630 s).  The heartbeat now applies the Diskcache
    jobs' rule: no report and no processor time for ``VARIMP_JOB_STALL_AFTER`` (6 s) ends
    the pool process, with the reason recorded first, and the poll's sentence says so."""
    from types import SimpleNamespace

    from pages._server import celery_jobs

    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("VARIMP_JOB_STALL_AFTER", raising=False)   # the default: 6 s
    monkeypatch.delenv("VARIMP_JOB_LOST_AFTER", raising=False)    # beats every 1.25 s
    proc, redis, took = _run_celery_child(tmp_path, "blocks", 20)
    print(f"stalled Celery job ended {took:.1f} s after it started (one report at its start)")
    assert proc.exitcode == -signal.SIGKILL, (proc.exitcode, redis)
    assert 6 <= took < 10, took                 # from the job's one report, as the rule says
    assert float(redis["varimp-job-stalled-t-stall"]) == 6 and "finished" not in redis
    app = SimpleNamespace(
        AsyncResult=lambda job: SimpleNamespace(state="FAILURE", result=None),
        backend=SimpleNamespace(client=SimpleNamespace(get=redis.get)))
    sentence = celery_jobs.lost_sentence(app, "t-stall")
    assert sentence.startswith("The process computing this view stopped making progress "
                               "(no report and no processor time for 6 s)"), sentence
    assert "memory" not in sentence
    # A pool process gone with no reason recorded is not said to have run out of memory.
    gone = celery_jobs.lost_sentence(app, "another")
    assert gone.startswith("The worker computing this view stopped before it finished")
    assert "memory" not in gone


@pytest.mark.parametrize("then", ["burns", "reports"])
def test_a_celery_job_that_computes_or_reports_is_left_alone(tmp_path, monkeypatch, then):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("VARIMP_JOB_STALL_AFTER", "3")              # the smallest allowed
    proc, redis, _ = _run_celery_child(tmp_path, then, 30)
    assert proc.exitcode == 0 and redis.get("finished") == then, (proc.exitcode, redis)
    assert "varimp-job-stalled-t-stall" not in redis
