"""Server-side cache shared by every user and every worker process.

Computed results live here keyed by a hash of their inputs, so identical requests
from different users reuse one result, and uploaded tables under random keys
(:func:`put_table`); nothing user-specific is kept in module-level variables.

Only text is stored: tables as JSON (:func:`varimp_core.data.tablejson.table_to_json`), results
as JSON (``ImportanceResult.to_dict()``).  Nothing read back from the cache is
ever unpickled, so a value that came from a user cannot run code.

The store (:mod:`pages._server.store`): with ``REDIS_URL`` set (or ``VARIMP_CACHE_URL``,
a Redis of its own), Redis, which the web server and every Celery worker reach, so no
disk is shared; else a ``diskcache`` in ``VARIMP_CACHE_DIR`` (default: a private folder
under the system temp dir) bounded by ``VARIMP_CACHE_BYTES`` (default 1 GiB, least
recently used entries evicted first; Redis is bounded by its own ``maxmemory``).
Results expire after ``VARIMP_RESULT_TTL`` and uploads after ``VARIMP_UPLOAD_TTL``
seconds; each browser's uploads are held to a quota (:func:`put_table`, :mod:`limits`).

Examples
--------
>>> from pages._server import cache
>>> key = cache.key_for("exact", {"problem": "led", "K": 1})
>>> cache.get_or_compute(key, lambda: {"answer": 42})
{'answer': 42}
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Callable

import pandas as pd

from pages._server import store
from varimp_core.data.tablejson import table_from_json, table_to_json
from pages._server.store import key_for

from pages._server import limits

# One open store per directory (or URL) and process (no user data).  Keyed by pid too: a
# background job forked from a web worker must open its own handle, never use the parent's
# SQLite connection, which another thread of the parent may hold locked at the fork (the
# child then hangs for ever in diskcache's reconnect).
_caches: dict[tuple[str, int], Any] = {}

# No lock around SQLite calls is needed against forks: Diskcache jobs start from a fork server
# with no thread (pages._server.job_host), never as a fork of a threaded web process; Celery's
# prefork workers use Redis, never SQLite (REDIS_URL makes the store Redis, _url below).


def cache_dir() -> str:
    """Directory of the shared cache: ``$VARIMP_CACHE_DIR`` or a private temp folder."""
    path = os.environ.get("VARIMP_CACHE_DIR")
    if not path:
        uid = os.getuid() if hasattr(os, "getuid") else "user"
        path = os.path.join(tempfile.gettempdir(), f"varimp-cache-{uid}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def get_cache():
    """The process's handle on the shared store (opened on first use; see the module's doc)."""
    url = _url()
    path = url or os.path.join(cache_dir(), "data")
    handle = (path, os.getpid())
    cache = _caches.get(handle)
    if cache is None and url:
        cache = store.RedisStore(url, default_ttl=limits.value("result_ttl"))
    elif cache is None:
        import diskcache

        size = int(os.environ.get("VARIMP_CACHE_BYTES", str(1 << 30)))
        cache = diskcache.Cache(path, size_limit=size, eviction_policy="least-recently-used")
    _caches[handle] = cache
    return cache


def get_upload_store():
    """The store of uploaded tables (opened on first use).

    On one machine a diskcache of its own, ``<cache dir>/uploads``, that evicts nothing:
    tables leave it only when they expire (``VARIMP_UPLOAD_TTL``), and a new one is admitted
    only while every stored table fits ``VARIMP_UPLOAD_STORE_BYTES``
    (:func:`pages._server.store.put_upload`).  So no result, and no other client's uploads
    however many, can push a user's table out of the server: a flood of uploads is refused,
    with a sentence, once the store is full.  With Redis (``VARIMP_CACHE_URL``/``REDIS_URL``),
    the shared store: run Redis with enough memory for the budget (see ``store``).
    """
    url = _url()
    if url:
        return get_cache()
    path = os.path.join(cache_dir(), "uploads")
    handle = (path, os.getpid())
    cache = _caches.get(handle)
    if cache is None:
        import diskcache

        cache = diskcache.Cache(path, size_limit=1 << 62, eviction_policy="none")
        _caches[handle] = cache
    return cache


def _url() -> str | None:
    return os.environ.get("VARIMP_CACHE_URL") or os.environ.get("REDIS_URL") or None


def is_shared() -> bool:
    """True when the store is Redis, which processes on other machines reach too (opens nothing)."""
    return _url() is not None


def get_json(key: str) -> Any | None:
    """The JSON value stored under ``key``, or None when absent (or evicted)."""
    text = get_cache().get(key, default=None, retry=True)
    if not isinstance(text, str):
        return None
    return json.loads(text)


def put_json(key: str, value: Any, *, expire: float | None = None) -> None:
    """Store a JSON-able value under ``key`` (as text), by default for ``VARIMP_RESULT_TTL`` s."""
    text = json.dumps(value, default=store.json_default)
    expire = limits.value("result_ttl") if expire is None else expire
    get_cache().set(key, text, expire=expire, retry=True)


#: Called at each look of a wait for another process's computation, whatever the caller's
#: ``on_wait``: :mod:`pages._server.job_signals` adds its liveness record here, so a job that
#: waits is never taken for a stuck one (#27.2).  (A hook, not an import: job_signals
#: imports this module.)
WHILE_WAITING: list[Callable[[], None]] = []


def get_or_compute(key: str, fn: Callable[[], Any], *, expire: float | None = None,
                   on_wait: Callable[[], None] | None = None) -> Any:
    """Return the cached value for ``key``, computing and storing it on a miss, once.

    :func:`pages._server.store.compute_once` on this process's store; ``expire`` is
    ``VARIMP_RESULT_TTL`` when None.  A job passes its progress report as ``on_wait``,
    which raises when the job's page was left while another process computes.  Every
    wait also calls the hooks of :data:`WHILE_WAITING`.
    """
    expire = limits.value("result_ttl") if expire is None else expire

    def waiting() -> None:
        for hook in WHILE_WAITING:
            hook()
        if on_wait is not None:
            on_wait()

    return store.compute_once(get_cache(), key, fn, expire=expire, on_wait=waiting)


def get_or_compute_result(key: str, fn: Callable[[], Any], *, expire: float | None = None,
                          on_wait: Callable[[], None] | None = None):
    """:func:`get_or_compute` for a :class:`~varimp_core.result.ImportanceResult`.

    ``fn`` returns an ``ImportanceResult``; it is stored as ``to_dict()`` and
    rebuilt with ``ImportanceResult.from_dict``.
    """
    from varimp_core.result import ImportanceResult

    d = get_or_compute(key, lambda: fn().to_dict(), expire=expire, on_wait=on_wait)
    return ImportanceResult.from_dict(d)


# -- tables ----------------------------------------------------------------
def put_table(df: pd.DataFrame, client: str = "-") -> str:
    """Store an uploaded table for ``VARIMP_UPLOAD_TTL`` s; a new key of 256 random bits.

    The text is stored once per content, under its hash (which opens nothing), and
    counts once against ``client``'s quota (``VARIMP_MAX_CLIENT_UPLOAD_BYTES``) and the
    store's budget (``VARIMP_UPLOAD_STORE_BYTES``): over either, a ``DataError`` with a
    sentence (:func:`pages._server.store.put_upload`).  Kept in :func:`get_upload_store`.
    """
    return store.put_upload(get_upload_store(), table_to_json(df), client,
                            quota=limits.value("client_upload_bytes"),
                            budget=limits.value("upload_store_bytes"),
                            ttl=limits.value("upload_ttl"), now=time.time())


def upload_companion(key: str, compute: Callable[[], Any]) -> Any:
    """A JSON value kept beside upload ``key``'s table for as long as it: ``compute()`` once
    per content, then read.

    It lives in the upload store (:func:`get_upload_store`, which evicts nothing on one
    machine) with the upload's time to live, not in the result cache: what pages read of an
    upload in their requests (its columns, every target's defaults, its column facts) is
    never evicted while the table is there, so a request never has to work it out again
    from the table.
    """
    uploads = get_upload_store()
    digest = uploads.get(f"upload:{key}", default=None, retry=True)
    if not isinstance(digest, str):
        return compute()
    name = store.companion_key(digest)   # one per content, renewed with its table
    text = uploads.get(name, default=None, retry=True)
    if isinstance(text, str):
        return json.loads(text)
    value = compute()
    uploads.set(name, json.dumps(value, default=store.json_default),
                expire=limits.value("upload_ttl"), retry=True)
    return value


def has_table(key: str) -> bool:
    """True when ``key`` names an upload still on the server (not expired, not evicted)."""
    uploads = get_upload_store()
    digest = uploads.get(f"upload:{key}", default=None, retry=True)
    return isinstance(digest, str) and f"table:{digest}" in uploads


def get_table(key: str) -> pd.DataFrame | None:
    """The table uploaded under ``key``, or None when it is unknown, expired or evicted."""
    text = store.upload_text(get_upload_store(), key)
    if text is None:
        return None
    try:
        return table_from_json(text)
    except (ValueError, KeyError, TypeError):
        return None
