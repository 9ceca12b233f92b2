"""The Redis store: a TTL on every key it writes, and a full Redis evicting cache entries only.

Expected values come from Redis's documented semantics: ``PTTL`` is -1 for a key
without expiry; under ``maxmemory-policy volatile-lru`` only keys with an expiry
are evicted, so a key without one (a Celery queue) survives any number of writes.
"""

from __future__ import annotations

import pandas as pd
import pytest
from _servers import Processes, start_redis

from pages._server import cache, job_signals
from pages._server import store


def test_every_key_the_server_writes_to_redis_expires(redis_url, monkeypatch):
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    monkeypatch.setenv("VARIMP_CACHE_URL", redis_url)
    monkeypatch.setenv("VARIMP_UPLOAD_TTL", "600")
    key = cache.put_table(pd.DataFrame({"x": [1, 2, 3], "y": [0, 1, 0]}), client="ttl-test")
    cache.put_json(cache.key_for("ttl-test", 1), {"v": 1})
    cache.get_or_compute(cache.key_for("ttl-test", 2), lambda: [1, 2])
    job_signals.request_stop("view", "job")
    job_signals.mark_polled("job")
    keys = list(client.scan_iter("*"))
    # upload:<key>, table:<hash>, quota:<client>, quota:* (every client's), two results, the
    # stop flag, the heartbeat
    assert len(keys) == 8, keys
    ttl = {k.decode(): client.pttl(k) for k in keys}
    assert all(t > 0 for t in ttl.values()), ttl
    assert 0 < ttl[f"varimp:cache:upload:{key}"] <= 600_000
    assert cache.get_table(key)["x"].tolist() == [1, 2, 3]


def test_a_full_redis_evicts_cache_entries_and_never_a_queue(tmp_path):
    import redis

    procs = Processes(tmp_path, {})
    try:
        url = start_redis(procs, "--maxmemory", "4mb", "--maxmemory-policy", "volatile-lru")
        client = redis.Redis.from_url(url)
        client.rpush("celery", "a queued task")  # as Celery's queues: no expiry
        s = store.RedisStore(url, default_ttl=3600)
        chunk = "x" * (256 << 10)
        for i in range(40):  # 10 MiB into 4 MiB
            assert s.set(f"result:{i}", chunk)
        assert "result:39" in s  # the newest entry is kept
        kept = sum(f"result:{i}" in s for i in range(40))
        assert kept < 16  # at most 4 MiB of 256 KiB entries
        assert client.lrange("celery", 0, -1) == [b"a queued task"]
    finally:
        procs.stop_all()


@pytest.mark.usefixtures("cache_backend")
def test_add_is_atomic_and_expires():
    s = cache.get_cache()
    assert s.add("add-test", "first", expire=0.5)
    assert not s.add("add-test", "second", expire=0.5)
    assert s.get("add-test") == "first"
    import time

    time.sleep(1.0)
    assert s.get("add-test") is None and s.add("add-test", "third", expire=60)
