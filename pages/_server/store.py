"""Where a server keeps results and uploads: one key-value interface, two stores.

Every value is text (JSON), kept under a string key for a time-to-live
:math:`\\tau` after which it is gone, in a store bounded in bytes that drops the
least recently used entries first (LRU) when full.  The interface
(:class:`Store`) is the part of ``diskcache.Cache``'s that the server uses, so a
``diskcache.Cache`` is the one-machine implementation, and :class:`RedisStore`
the one shared by a web server and Celery workers on other machines: nothing is
read from a shared disk.

Redis bounds its memory itself: run it with ``--maxmemory`` (say ``1gb``) and
``--maxmemory-policy volatile-lru``.  Every key written here has a TTL, so
``volatile-lru`` evicts least recently used cache entries and never the Celery
queues that share the server (which have none); a Redis kept for the cache
alone can use ``allkeys-lru``.

Computing once (:func:`compute_once`): the first caller of a key takes its lock
``lock:<key>`` (``add``: Redis ``SET NX PX``, an atomic insert that expires),
computes and stores; the others poll until the value appears.  The holder renews
its lock every ``lock_ttl / 3`` seconds while it computes, so the lock of a holder
that died on any machine expires within ``lock_ttl`` (a killed job releases
nothing); one whose holder process no longer runs on this machine is taken over at
once, and a waiter gives up waiting after ``lock_expire``.

Uploads (:func:`put_upload`): the table's text is stored once per content hash
``table:<sha256>``, opened through a key of 256 random bits ``upload:<key>``
(a content hash opens nothing), and counted once against the uploading
browser's quota (:func:`pages._server.retention.admit`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Protocol

import numpy as np

from varimp_core import __version__ as core_version
from pages._server.retention import admit, store_full_text

__all__ = ["Store", "RedisStore", "key_for", "json_default", "compute_once", "holder",
           "holder_is_gone", "put_upload", "upload_text"]

#: Bumped whenever the stored formats change, so old entries are never misread.
CACHE_VERSION = 4  # 4: shared parts tagged with their core type (pages._framework.parts)


class Store(Protocol):
    """What the server needs of a store: ``diskcache.Cache``'s names and arguments.

    ``expire`` is in seconds; ``retry`` (diskcache: retry a locked SQLite) is
    accepted and ignored where it means nothing.
    """

    def get(self, key: str, default: Any = None, retry: bool = False) -> Any: ...

    def set(self, key: str, value: str, expire: float | None = None,
            retry: bool = False) -> bool: ...

    def add(self, key: str, value: str, expire: float | None = None,
            retry: bool = False) -> bool: ...

    def touch(self, key: str, expire: float | None = None, retry: bool = False) -> bool: ...

    def delete(self, key: str, retry: bool = False) -> bool: ...

    def __contains__(self, key: str) -> bool: ...

    def transact(self, retry: bool = False) -> Any: ...


class RedisStore:
    """A :class:`Store` on Redis: keys ``<prefix><key>``, text values, a TTL on every key.

    Parameters
    ----------
    url : str
        ``redis://host:port/db``.
    default_ttl : float
        Seconds a value written without ``expire`` is kept.
    prefix : str, default="varimp:cache:"
        Keeps the cache's keys apart from Celery's on a shared server.
    """

    def __init__(self, url: str, default_ttl: float, prefix: str = "varimp:cache:"):
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=10, health_check_interval=30)
        self.default_ttl, self.prefix = default_ttl, prefix

    def _ms(self, expire: float | None) -> int:
        return max(1, math.ceil(1000 * (self.default_ttl if expire is None else expire)))

    def get(self, key: str, default: Any = None, retry: bool = False) -> Any:
        value = self.client.get(self.prefix + key)
        return default if value is None else value.decode("utf-8")

    def set(self, key: str, value: str, expire: float | None = None, retry: bool = False):
        return bool(self.client.set(self.prefix + key, value, px=self._ms(expire)))

    def add(self, key: str, value: str, expire: float | None = None, retry: bool = False):
        """Store only where ``key`` is absent (``SET NX PX``): True when stored."""
        return bool(self.client.set(self.prefix + key, value, px=self._ms(expire), nx=True))

    def touch(self, key: str, expire: float | None = None, retry: bool = False) -> bool:
        return bool(self.client.pexpire(self.prefix + key, self._ms(expire)))

    def delete(self, key: str, retry: bool = False) -> bool:
        return bool(self.client.delete(self.prefix + key))

    def ttl(self, key: str) -> float | None:
        """Seconds ``key`` has left by Redis's clock (``PTTL``); None when it is absent."""
        left = self.client.pttl(self.prefix + key)
        return None if left < 0 else left / 1000

    def __contains__(self, key: str) -> bool:
        return bool(self.client.exists(self.prefix + key))

    @contextmanager
    def transact(self, retry: bool = False) -> Iterator[None]:
        """One writer at a time across every process (a Redis lock: ``SET NX PX``, 10 s)."""
        with self.client.lock(self.prefix + "transact", timeout=10, blocking_timeout=30):
            yield


def json_default(obj):
    """JSON for numpy values, sets and objects with ``to_dict`` (``json.dumps(default=)``)."""
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
        default=json_default,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def holder() -> str:
    """This process, as a lock's holder: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def holder_is_gone(name) -> bool:
    """True when the lock's holder is a process of this machine that no longer runs."""
    if not isinstance(name, str) or ":" not in name:
        return False
    host, _, pid = name.rpartition(":")
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
    import psutil

    try:
        return psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:
        return False


def _get_json(store: Store, key: str) -> Any | None:
    text = store.get(key, default=None, retry=True)
    return json.loads(text) if isinstance(text, str) else None


def compute_once(store: Store, key: str, fn: Callable[[], Any], *, expire: float,
                 on_wait: Callable[[], None] | None = None, lock_expire: float = 900.0,
                 lock_ttl: float = 30.0, poll: float = 0.1) -> Any:
    """The value stored under ``key``, computed by ``fn`` and stored on a miss, once.

    Parameters
    ----------
    store : Store
        Where values and the lock ``lock:<key>`` live.
    key : str
        Usually from :func:`key_for`.
    fn : callable
        Zero-argument function returning a JSON-able value.
    expire : float
        Seconds the value is kept.
    on_wait : callable, default=None
        Called every poll while another process computes the value.
    lock_expire, lock_ttl, poll : float
        Seconds a waiter waits at most, a lock lives without renewal, and between two
        looks at it.

    Returns
    -------
    value : JSON-able
        What ``fn`` returned, as read back from JSON (tuples become lists).
    """
    value = _get_json(store, key)
    if value is not None:
        return value
    lock, me = f"lock:{key}", holder()
    deadline = time.monotonic() + lock_expire
    while not store.add(lock, me, expire=lock_ttl, retry=True):
        time.sleep(poll)
        if on_wait is not None:
            on_wait()
        value = _get_json(store, key)
        if value is not None:
            return value
        if time.monotonic() > deadline or holder_is_gone(store.get(lock)):
            store.delete(lock, retry=True)  # the holder died without releasing it
    done = threading.Event()

    def renew() -> None:  # while fn runs: a holder that dies stops renewing
        while not done.wait(lock_ttl / 3):
            store.touch(lock, expire=lock_ttl, retry=True)

    threading.Thread(target=renew, name=f"varimp-lock-{key[:8]}", daemon=True).start()
    try:
        value = _get_json(store, key)
        if value is None:
            text = json.dumps(fn(), default=json_default)
            store.set(key, text, expire=expire, retry=True)
            value = json.loads(text)
        return value
    finally:
        done.set()
        if store.get(lock) == me:
            store.delete(lock, retry=True)


def put_upload(store: Store, text: str, client: str, *, quota: int, ttl: float,
               now: float, budget: int | None = None) -> str:
    """Store an uploaded table's text for ``ttl`` s; a new key of 256 random bits.

    The text is stored once per content, under its hash, and counts once against
    ``client``'s quota of ``quota`` bytes: over it, a ``DataError`` with a sentence
    (:func:`pages._server.retention.admit`), and nothing is stored.  With a ``budget``, the
    store's tables together (every client's, counted once per content, under ``quota:*``)
    are held to it the same way (:func:`pages._server.retention.store_full_text`).
    """
    data = text.encode("utf-8")
    digest, key = hashlib.sha256(data).hexdigest(), secrets.token_hex(32)
    with store.transact(retry=True):  # one quota update at a time
        held = admit(_get_json(store, f"quota:{client}"), digest, len(data), quota=quota,
                     ttl=int(ttl), now=now)
        if budget is not None:
            everyone = admit(_get_json(store, "quota:*"), digest, len(data), quota=budget,
                             ttl=int(ttl), now=now, sentence=store_full_text)
        store.set(f"quota:{client}", json.dumps(held), expire=ttl, retry=True)
        if budget is not None:
            store.set("quota:*", json.dumps(everyone), expire=ttl, retry=True)
        if not store.touch(f"table:{digest}", expire=ttl, retry=True):
            store.set(f"table:{digest}", text, expire=ttl, retry=True)
        store.touch(companion_key(digest), expire=ttl, retry=True)  # lives as long as it
        store.set(f"upload:{key}", digest, expire=ttl, retry=True)
    return key


def companion_key(digest: str) -> str:
    """Where what is read of a stored table (its columns, defaults and facts) is kept beside
    it, renewed with it (:func:`put_upload`, :func:`pages._server.cache.upload_companion`)."""
    return f"companion:{digest}"


def upload_text(store: Store, key: str) -> str | None:
    """The text uploaded under ``key``, or None when unknown, expired or evicted."""
    digest = store.get(f"upload:{key}", default=None, retry=True)
    if not isinstance(digest, str):
        return None
    text = store.get(f"table:{digest}", default=None, retry=True)
    return text if isinstance(text, str) else None
