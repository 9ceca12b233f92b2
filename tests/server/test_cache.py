"""A cancelled job is killed while it holds a cache lock; nobody may wait for it.

On both stores (``cache_backend``: diskcache, and Redis, whose lock is ``SET NX PX``).
"""

import subprocess
import sys
import threading
import time

import pytest

from pages._server import cache
from pages._server import store

pytestmark = pytest.mark.usefixtures("cache_backend")


def test_lock_of_a_dead_process_is_taken_over(tmp_path, monkeypatch):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    key = cache.key_for("lock-test", 1)
    host = store.holder().rpartition(":")[0]
    cache.get_cache().add(f"lock:{key}", f"{host}:{dead.pid}", expire=3600)
    assert store.holder_is_gone(f"{host}:{dead.pid}")  # so no 15-minute wait for it
    assert cache.get_or_compute(key, lambda: {"v": 1}) == {"v": 1}
    assert f"lock:{key}" not in cache.get_cache()  # released


def test_lock_of_a_live_process_is_respected(tmp_path, monkeypatch):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    assert not store.holder_is_gone(store.holder())
    assert not store.holder_is_gone("other-host:1")
    assert not store.holder_is_gone("1")
    key = cache.key_for("lock-test", 2)
    assert cache.get_cache().add(f"lock:{key}", "other-host:1", expire=60)
    assert not cache.get_cache().add(f"lock:{key}", "other-host:2", expire=60)  # taken
    got = []
    waiter = threading.Thread(target=lambda: got.append(cache.get_or_compute(key, dict)))
    waiter.start()
    time.sleep(0.5)
    assert not got  # it waits for the holder's value rather than computing its own
    cache.put_json(key, {"v": 2})
    waiter.join(10)
    assert got == [{"v": 2}]


def test_two_threads_compute_a_value_once():
    key, calls = cache.key_for("lock-test", 3), []

    def slow():
        calls.append(1)
        time.sleep(0.3)
        return {"v": 3}

    threads = [threading.Thread(target=cache.get_or_compute, args=(key, slow))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert calls == [1] and cache.get_json(key) == {"v": 3}


def test_a_lock_of_a_holder_on_another_machine_expires_unless_renewed():
    """A holder elsewhere that died renews nothing: its lock lapses after ``lock_ttl``.
    A live holder renews its lock while it computes longer than ``lock_ttl``."""
    s, key = cache.get_cache(), cache.key_for("lock-test", 4)
    assert s.add(f"lock:{key}", "other-host:1", expire=0.6)  # a dead holder on another host
    assert store.compute_once(s, key, lambda: {"v": 4}, expire=60) == {"v": 4}

    key, calls, got = cache.key_for("lock-test", 5), [], []

    def slow():
        calls.append(1)
        time.sleep(2.0)  # over three lock lifetimes
        return {"v": 5}

    def compute():
        got.append(store.compute_once(s, key, slow, expire=60, lock_ttl=0.6))

    first = threading.Thread(target=compute)
    first.start()
    time.sleep(1.5)
    assert s.get(f"lock:{key}") == store.holder()  # renewed past 0.6 s
    second = threading.Thread(target=compute)
    second.start()
    for t in (first, second):
        t.join(10)
    assert calls == [1] and got == [{"v": 5}, {"v": 5}]
    assert f"lock:{key}" not in s
