"""Server-side cache shared by every user and every worker process.

Computed results live here keyed by a hash of their inputs, so identical requests
from different users reuse one result, and uploaded tables under random keys
(:func:`put_table`); nothing user-specific is kept in module-level variables.

Only text is stored: tables as JSON (:func:`varimp_core.data.tablejson.table_to_json`), results
as JSON (``ImportanceResult.to_dict()``).  Nothing read back from the cache is
ever unpickled, so a value that came from a user cannot run code.

The cache directory comes from ``VARIMP_CACHE_DIR`` (default: a private folder
under the system temp dir); ``VARIMP_CACHE_BYTES`` bounds its size (default
1 GiB, least-recently-used entries are evicted first).  Results expire after
``VARIMP_RESULT_TTL`` and uploads after ``VARIMP_UPLOAD_TTL`` seconds; each
browser's uploads are held to a quota (:func:`put_table`, :mod:`limits`).

Examples
--------
>>> from pages._ui import cache
>>> key = cache.key_for("exact", {"problem": "led", "K": 1})
>>> cache.get_or_compute(key, lambda: {"answer": 42})
{'answer': 42}
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable

import numpy as np
import pandas as pd

from varimp_core import __version__ as core_version
from varimp_core.data.tablejson import table_from_json, table_to_json
from varimp_core.retention import admit

from . import limits

#: Bumped whenever the stored formats change, so old entries are never misread.
CACHE_VERSION = 3

_LOCK_EXPIRE = 900.0  # seconds a computation may hold its key's lock
_LOCK_POLL = 0.1

# One open diskcache.Cache per directory and process (no user data).  Keyed by pid too: a
# background job forked from a web worker must open its own handle, never use the parent's
# SQLite connection, which another thread of the parent may hold locked at the fork (the
# child then hangs for ever in diskcache's reconnect).
_caches: dict[tuple[str, int], Any] = {}

# SQLite and fork: a job process forked while another thread of the web process is inside
# SQLite inherits SQLite's own mutex locked and hangs for ever at its first connection (seen
# with the threaded server: a job stuck in sqlite3.connect).  So every SQLite call of this
# process holds one lock, and so does the fork of a job (jobs.py); the child starts with a
# fresh lock.  Each call lasts a millisecond or so; a sync gunicorn worker has one thread.
_guard = {"lock": threading.RLock()}
os.register_at_fork(after_in_child=lambda: _guard.update(lock=threading.RLock()))


def fork_guard():
    """The lock held around every SQLite call and around forking a job (a context manager)."""
    return _guard["lock"]


class SQLiteGuarded:
    """A ``diskcache.Cache`` whose every call (and ``transact`` block) holds :func:`fork_guard`."""

    def __init__(self, cache):
        self.cache = cache

    def __contains__(self, key) -> bool:
        with fork_guard():
            return key in self.cache

    def __getattr__(self, name):
        attr = getattr(self.cache, name)
        if name == "transact":
            @contextmanager
            def transact(*args, **kwargs):
                with fork_guard(), attr(*args, **kwargs) as value:
                    yield value
            return transact
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            with fork_guard():
                return attr(*args, **kwargs)
        return call


def cache_dir() -> str:
    """Directory of the shared cache: ``$VARIMP_CACHE_DIR`` or a private temp folder."""
    path = os.environ.get("VARIMP_CACHE_DIR")
    if not path:
        uid = os.getuid() if hasattr(os, "getuid") else "user"
        path = os.path.join(tempfile.gettempdir(), f"varimp-cache-{uid}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def get_cache():
    """The process's handle on the shared ``diskcache.Cache`` (opened on first use)."""
    import diskcache

    path = os.path.join(cache_dir(), "data")
    handle = (path, os.getpid())
    cache = _caches.get(handle)
    if cache is None:
        size = int(os.environ.get("VARIMP_CACHE_BYTES", str(1 << 30)))
        cache = SQLiteGuarded(diskcache.Cache(path, size_limit=size,
                                              eviction_policy="least-recently-used"))
        _caches[handle] = cache
    return cache


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=repr)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"Cannot put a {type(obj).__name__} into a cache key.")


def key_for(*parts: Any) -> str:
    """Hash the inputs of a computation into a cache key.

    Parameters
    ----------
    *parts : JSON-able values
        Everything the result depends on (method name, parameters, the data's
        own key ...).  Dicts are canonicalised (sorted keys), tuples count as
        lists, numpy scalars and arrays as their Python values.

    Returns
    -------
    key : str
        64 hex digits: sha256 of the canonical JSON of ``parts`` together with
        :data:`CACHE_VERSION` and the core's version.
    """
    text = json.dumps(
        [CACHE_VERSION, core_version, list(parts)],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=_json_default,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def get_json(key: str) -> Any | None:
    """The JSON value stored under ``key``, or None when absent (or evicted)."""
    text = get_cache().get(key, default=None, retry=True)
    if not isinstance(text, str):
        return None
    return json.loads(text)


def put_json(key: str, value: Any, *, expire: float | None = None) -> None:
    """Store a JSON-able value under ``key`` (as text), by default for ``VARIMP_RESULT_TTL`` s."""
    text = json.dumps(value, default=_json_default)
    expire = limits.value("result_ttl") if expire is None else expire
    get_cache().set(key, text, expire=expire, retry=True)


def _holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _holder_is_gone(holder) -> bool:
    """True when the lock's holder is a process of this machine that no longer runs."""
    if not isinstance(holder, str) or ":" not in holder:
        return False
    host, _, pid = holder.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    # A cancelled job is killed; until its parent (maybe another web worker) reaps
    # it, it is a zombie, which os.kill still finds.
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a requirement
        return False
    try:
        return psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def get_or_compute(key: str, fn: Callable[[], Any], *, expire: float | None = None,
                   on_wait: Callable[[], None] | None = None) -> Any:
    """Return the cached value for ``key``, computing and storing it on a miss.

    Concurrent callers with the same key (two users, two workers) wait for the
    first computation instead of repeating it.  A lock whose holder process no
    longer runs (a cancelled background job is killed) or that is older than 15
    minutes is considered abandoned.

    Parameters
    ----------
    key : str
        Usually from :func:`key_for`.
    fn : callable
        Zero-argument function returning a JSON-able value.
    expire : float, default=None
        Seconds after which the entry is dropped; None: ``VARIMP_RESULT_TTL``.
    on_wait : callable, default=None
        Called every poll while another process computes the value; a job passes
        its progress report, which raises when the job's page was left.

    Returns
    -------
    value : JSON-able
        What ``fn`` returned, as read back from JSON (tuples become lists).
    """
    value = get_json(key)
    if value is not None:
        return value
    cache = get_cache()
    lock = f"lock:{key}"
    deadline = time.monotonic() + _LOCK_EXPIRE
    while not cache.add(lock, _holder(), expire=_LOCK_EXPIRE, retry=True):
        time.sleep(_LOCK_POLL)
        if on_wait is not None:
            on_wait()
        value = get_json(key)
        if value is not None:
            return value
        if time.monotonic() > deadline or _holder_is_gone(cache.get(lock)):
            # the holder died without releasing (a cancelled background job is killed)
            cache.delete(lock, retry=True)
    try:
        value = get_json(key)
        if value is None:
            value = json.loads(json.dumps(fn(), default=_json_default))
            put_json(key, value, expire=expire)
        return value
    finally:
        cache.delete(lock, retry=True)


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
    counts once against ``client``'s quota (``VARIMP_MAX_CLIENT_UPLOAD_BYTES``): over it,
    a ``DataError`` with a sentence (:func:`varimp_core.retention.admit`).
    """
    text = table_to_json(df)
    digest, size = hashlib.sha256(text.encode("utf-8")).hexdigest(), len(text.encode("utf-8"))
    ttl, quota, now = limits.value("upload_ttl"), limits.value("client_upload_bytes"), time.time()
    cache, key = get_cache(), secrets.token_hex(32)
    with cache.transact(retry=True):  # DataError: over quota (rolled back)
        held = admit(get_json(f"quota:{client}"), digest, size, quota=quota, ttl=ttl, now=now)
        put_json(f"quota:{client}", held, expire=ttl)
        if not cache.touch(f"table:{digest}", expire=ttl, retry=True):
            cache.set(f"table:{digest}", text, expire=ttl, retry=True)
        cache.set(f"upload:{key}", digest, expire=ttl, retry=True)
    return key


def has_table(key: str) -> bool:
    """True when ``key`` names an upload still on the server (not expired, not evicted)."""
    digest = get_cache().get(f"upload:{key}", default=None, retry=True)
    return isinstance(digest, str) and f"table:{digest}" in get_cache()


def get_table(key: str) -> pd.DataFrame | None:
    """The table uploaded under ``key``, or None when it is unknown, expired or evicted."""
    digest = get_cache().get(f"upload:{key}", default=None, retry=True)
    text = get_cache().get(f"table:{digest}", default=None, retry=True)
    if not isinstance(text, str):
        return None
    try:
        return table_from_json(text)
    except (ValueError, KeyError, TypeError):
        return None
