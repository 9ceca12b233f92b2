"""A dashboard started as a program, the way an installed package or the image starts it.

Used by ``test_package.py`` (``varimp serve`` from a wheel installed in a fresh venv) and
``test_image.py`` (the Dockerfile's CMD, run as a non-root user in a copy of the image's
files).  The program runs in a session of its own, dies with the test process, and is
stopped with its whole process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

import requests

from _servers import DashCallbackClient, die_with_parent, serves_health, wait

__all__ = ["running", "page_layout"]


@contextlib.contextmanager
def running(cmd: list[str], *, base: str, cwd: Path, env: dict, log: Path, preexec=None,
            timeout: float = 90):
    """Start ``cmd``; yield once ``base`` serves ``/_health``; stop its process group."""
    def setup():
        die_with_parent()
        if preexec is not None:
            preexec()

    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=setup)
    try:
        wait(lambda: serves_health(base), timeout, f"{' '.join(cmd)} to serve /_health",
             proc, log)
        yield proc
    finally:
        for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        with contextlib.suppress(ProcessLookupError):  # workers' children, if any are left
            os.killpg(proc.pid, signal.SIGKILL)


def page_layout(base: str, path: str) -> str:
    """The layout Dash's page router sends for ``path`` (its real callback, over HTTP), as JSON
    text."""
    client = DashCallbackClient.over_http(base, "_pages_content.children", path)
    body = client.body({"_pages_location.pathname": path, "_pages_location.search": ""},
                       "_pages_location.pathname")
    answer = client.post(body)
    assert "_pages_content" in answer["response"], str(answer)[:300]
    assert requests.get(base + path, timeout=30).status_code == 200
    return json.dumps(answer["response"]["_pages_content"]["children"])
