"""A cancelled job is killed while it holds a cache lock; nobody may wait for it."""

import subprocess
import sys
import time

from pages._ui import cache


def test_lock_of_a_dead_process_is_taken_over(tmp_path, monkeypatch):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    key = cache.key_for("lock-test", 1)
    host = cache._holder().rpartition(":")[0]
    cache.get_cache().add(f"lock:{key}", f"{host}:{dead.pid}", expire=3600)
    t0 = time.monotonic()
    assert cache.get_or_compute(key, lambda: {"v": 1}) == {"v": 1}
    assert time.monotonic() - t0 < 5  # not the 15-minute abandonment timeout


def test_lock_of_a_live_process_is_respected(tmp_path, monkeypatch):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    assert not cache._holder_is_gone(cache._holder())
    assert not cache._holder_is_gone("other-host:1")
    assert not cache._holder_is_gone("1")
