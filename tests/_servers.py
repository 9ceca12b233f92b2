"""Real servers for tests: subprocesses in their own process groups, gunicorn on a free port.

Used by ``test_scaleout.py`` (Redis, gunicorn, Celery workers),
``test_isolation.py`` (gunicorn with 2 workers on the Diskcache manager) and
``test_hygiene.py`` (:class:`DashCallbackClient` on the Flask test client).
Every process starts in a new session and is SIGKILLed if the test process
dies (``PR_SET_PDEATHSIG``); :meth:`Processes.stop_all` stops the rest.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

__all__ = ["ROOT", "BIN", "free_port", "wait", "die_with_parent", "Processes", "start_web",
           "start_redis", "DashCallbackClient", "post_and_poll", "upload_body"]
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(predicate, timeout: float, what: str, proc=None, log=None):
    """Poll ``predicate`` until true; fail the test (with the log's tail) after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.1)
    tail = Path(log).read_text(errors="replace")[-3000:] if log else ""
    pytest.fail(f"Waited {timeout:g} s in vain for: {what}.\n{tail}")


def die_with_parent():  # runs in the child: SIGKILL it if the test process dies
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Processes:
    """Subprocesses in their own process groups, stopped by :meth:`stop_all`."""

    def __init__(self, logdir: Path, env: dict):
        self.logdir, self.env, self.procs = logdir, env, {}

    def start(self, name: str, cmd: list[str], env: dict | None = None) -> subprocess.Popen:
        """Start ``cmd`` logging to ``<name>.log``; ``env`` adds to (or overrides) the common."""
        log = open(self.logdir / f"{name}.log", "wb")
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**self.env, **(env or {})}, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=die_with_parent)
        log.close()
        self.procs[name] = proc
        return proc

    def log(self, name: str) -> str:
        return (self.logdir / f"{name}.log").read_text(errors="replace")

    def kill(self, name: str, sig=signal.SIGKILL) -> None:
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)

    def stop_all(self) -> None:
        for name in list(self.procs):
            self.kill(name, signal.SIGTERM if name in ("redis", "web") else signal.SIGKILL)


def start_web(procs: Processes, *, workers: int = 2, timeout: float = 60,
              extra: tuple[str, ...] = ()) -> str:
    """``gunicorn app:server`` with ``workers`` workers on a free port; its base URL once up.

    ``extra`` arguments go to gunicorn (e.g. an access log).
    """
    port = free_port()
    procs.start("web", [str(BIN / "gunicorn"), "app:server", "--workers", str(workers),
                        "--bind", f"127.0.0.1:{port}", "--timeout", "120",
                        "--graceful-timeout", "2", *extra])
    base = f"http://127.0.0.1:{port}"
    wait(lambda: serves_health(base), timeout, "gunicorn to serve /_health", procs.procs["web"],
         procs.logdir / "web.log")
    return base


def start_redis(procs: Processes, *args: str) -> str:
    """``redis-server`` on a free loopback port, without persistence; its URL once it answers.

    ``args`` are more of the server's options (``--maxmemory 2mb`` ...).
    """
    if not os.path.exists(REDIS_SERVER):
        pytest.fail("redis-server is required for these tests; `make test` installs it "
                    "(apt-get install redis-server).")
    port = free_port()
    procs.start("redis", [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                          "--appendonly", "no", "--protected-mode", "yes", *args])
    import redis

    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url, socket_timeout=2)

    def answers():
        try:
            return client.ping()
        except redis.ConnectionError:
            return False

    wait(answers, 10, "redis-server to answer", procs.procs["redis"], procs.logdir / "redis.log")
    return url


def serves_health(base: str) -> bool:
    """True once the server at ``base`` answers ``/_health`` with 200."""
    import requests

    try:
        return requests.get(base + "/_health", timeout=1).status_code == 200
    except requests.RequestException:
        return False


# -- Dash's callback protocol over HTTP -----------------------------------------------------
_CONFIG = re.compile(r'<script id="_dash-config" type="application/json">(.*?)</script>', re.S)


class DashCallbackClient:
    """Drives one callback of the app as dash-renderer does, over HTTP or a Flask test client.

    A background callback's first POST returns signed ``cacheKey`` and ``job``
    handles; polls carry them and get ``progress`` until ``response`` (or a
    ``sideUpdate`` from the job's ``on_error``); a ``sideUpdate`` of the view's
    ``{prefix}-streamed`` store alone is a partial result drawn while the job goes on.

    Build with :meth:`over_http` (a base URL) or :meth:`over_flask` (a Flask
    test client).
    """

    def __init__(self, get_text, get_json, post_json, output_part: str, page: str = "/"):
        self._post_json = post_json
        self.end_id = json.loads(_CONFIG.search(get_text(page)).group(1))["end_id"]
        deps = [d for d in get_json("/_dash-dependencies") if output_part in d["output"]]
        # prefer the background callback when a plain one shares the output (cache hits)
        self.dep = next((d for d in deps if d.get("background")), deps[0])

    @classmethod
    def over_http(cls, base: str, output_part: str, page: str = "/"):
        import requests

        http = requests.Session()

        def post(params, body):
            r = http.post(base + "/_dash-update-component", params=params, json=body, timeout=30)
            return r.status_code, (r.json() if r.status_code == 200 else r.text)

        return cls(lambda p: http.get(base + p, timeout=30).text,
                   lambda p: http.get(base + p, timeout=30).json(), post, output_part, page)

    @classmethod
    def over_flask(cls, client, output_part: str, page: str = "/"):
        def post(params, body):
            r = client.post("/_dash-update-component", query_string=params, json=body)
            return r.status_code, (r.get_json() if r.status_code == 200
                                   else r.get_data(as_text=True))

        return cls(lambda p: client.get(p).get_data(as_text=True),
                   lambda p: client.get(p).get_json(), post, output_part, page)

    def body(self, values: dict, changed: str) -> dict:
        outputs = []
        for part in self.dep["output"].strip(".").split("..."):
            cid, _, prop = part.rpartition(".")
            outputs.append({"id": cid, "property": prop.split("@")[0]})

        def fill(items):
            return [{**i, "value": values.get(f"{i['id']}.{i['property']}")} for i in items]
        multi = self.dep["output"].startswith("..")  # one output is sent alone, not in a list
        return {"output": self.dep["output"], "outputs": outputs if multi else outputs[0],
                "inputs": fill(self.dep["inputs"]), "state": fill(self.dep.get("state", [])),
                "changedPropIds": [changed]}

    def post(self, body: dict, **handles):
        status, answer = self._post_json({"endId": self.end_id, **handles}, body)
        assert status == 200, (status, str(answer)[:500])
        return answer

    def run(self, values: dict, changed: str, *, timeout: float, on_poll=None):
        """Start the background job and poll it to its end: (first answer, progress, last).

        ``on_poll(first, progress)`` runs after each poll that did not end the job.
        """
        body = self.body(values, changed)
        first = self.post(body)
        assert {"cacheKey", "job"} <= set(first), first
        progress, deadline = [], time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(0.2)
            answer = self.post(body, cacheKey=first["cacheKey"], job=first["job"])
            if "progress" in answer:
                progress.append(answer["progress"])
            if job_ended(answer):
                return first, progress, answer
            if on_poll is not None:
                on_poll(first, progress)
        pytest.fail(f"The job did not end within {timeout:g} s (progress: {progress[-3:]}).")


def job_ended(answer: dict) -> bool:
    """Whether a poll's answer ends its job: its ``response``, or a ``sideUpdate`` (the job's
    ``on_error``) that is not only a partial result (the ``{prefix}-streamed`` store)."""
    side = answer.get("sideUpdate") or {}
    return "response" in answer or any(not key.endswith("-streamed") for key in side)


def job_status(answer: dict, status_id: str) -> str:
    """The status line a job's last poll wrote: its ``response``'s, or else the sentence its
    ``on_error`` sent as a ``sideUpdate`` (a lost job, an error past the page's ``try``)."""
    for part in ("response", "sideUpdate"):
        value = (answer.get(part) or {}).get(status_id)
        if value is not None:
            return value.get("children")
    return f"(no status in the answer: {str(answer)[:1500]})"


def post_and_poll(post, body: dict, *, timeout: float = 60.0, interval: float = 0.05):
    """One callback request as dash-renderer makes it, background or plain: POST ``body``; if
    the answer is a job's handles, poll with them until the job answers.

    ``post(query, body) -> (status, text)`` sends one ``/_dash-update-component`` request.
    Returns ``(status, text)`` of the answer that ends the callback: the first one when it
    is not HTTP 200 or not a job (a plain callback, HTTP 413), else the poll carrying the
    job's ``response`` or ``sideUpdate`` (an HTTP 204 poll is "not yet", as for the renderer).
    """
    status, text = post({}, body)
    first = json.loads(text) if status == 200 else {}
    if not {"cacheKey", "job"} <= set(first):
        return status, text
    handles, deadline = {"cacheKey": first["cacheKey"], "job": first["job"]}, \
        time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, text = post(handles, body)
        answer = json.loads(text) if status == 200 and text else {}
        if status not in (200, 204) or job_ended(answer):
            return status, text
        time.sleep(interval)
    pytest.fail(f"The job did not answer within {timeout:g} s.")


def upload_body(deps: list, contents, filename) -> dict:
    """The body dash-renderer posts when a file is dropped on the Data page (``deps``: the
    app's ``/_dash-dependencies``)."""
    spec = next(d for d in deps if [i["id"] for i in d["inputs"]] == ["data-upload"])
    outputs = [o.rsplit(".", 1) for o in spec["output"].strip(".").split("...")]
    return {"output": spec["output"], "outputs": [{"id": i, "property": p} for i, p in outputs],
            "inputs": [{"id": "data-upload", "property": "contents", "value": contents}],
            "state": [{"id": "data-upload", "property": "filename", "value": filename}],
            "changedPropIds": ["data-upload.contents"]}
