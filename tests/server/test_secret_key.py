"""VARIMP_SECRET_KEY signs background-job handles, so they survive restarts (issue #17)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import app
s = app.app._get_signing_secret()
print(app.server.secret_key == "k" * 64, s == b"k" * 64)
"""


def test_the_secret_key_signs_background_jobs_in_every_process(tmp_path):
    """Two separate processes (two gunicorn workers, or one before and one after a restart)
    sign with the same key: the one given, not one drawn at random or kept in Redis."""
    env = {**os.environ, "VARIMP_SECRET_KEY": "k" * 64, "VARIMP_CACHE_DIR": str(tmp_path)}
    env.pop("REDIS_URL", None)
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.split()[-2:] == ["True", "True"]


def test_make_run_keeps_one_secret_between_runs(tmp_path):
    """The Makefile's secret file is made once, private, and read again by the next run."""
    secret = tmp_path / "secret"
    subprocess.run(["make", "-s", str(secret), f"SECRET_FILE={secret}"], cwd=ROOT, check=True,
                   timeout=60)
    text = secret.read_text().strip()
    assert len(bytes.fromhex(text)) == 32
    assert secret.stat().st_mode & 0o077 == 0
    first = text
    subprocess.run(["make", "-s", str(secret), f"SECRET_FILE={secret}"], cwd=ROOT, check=True,
                   timeout=60)
    assert secret.read_text().strip() == first
