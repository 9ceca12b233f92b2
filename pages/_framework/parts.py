"""The result cache's one codec: core results stored once, shared by reference.

A page's ``compute`` returns a dict whose top-level values may be the core's result
objects (:data:`CORE_TYPES`: ``ImportanceResult``, ``ImportanceMoments``,
``VerdictResult``, ``ChanceLevels``).  :class:`pages._framework.view.JobView` is the
only place that serialises it, once, at the edge (:func:`encode`), and rebuilds it,
once, on a cache hit (:func:`decode`).

Results several pages share (the importances of a K, the exact moments) are *parts*:
:func:`shared` computes one under the lock of its own key (made of its name, the
canonical data and the core's keyword arguments), stores its ``to_dict()`` once, and
returns the object itself on the compute path (nothing is read back).  A page result
that holds a part stores only a reference to its key (``{"__part__": key}``), not a
second copy; a reference whose entry the cache has evicted makes the page result a
miss (:func:`decode` returns None), so it is computed again, never an error.

The references are known within one run: :func:`collecting` (entered by
``JobView.run``) notes every part :func:`shared` returns, by identity.  Outside a run
(a test calling ``compute`` directly) a part is stored inline, as any core object.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Mapping

from varimp_core.exact.moments import ImportanceMoments
from varimp_core.result import ImportanceResult
from varimp_core.studies.chance import ChanceLevels
from varimp_core.studies.verdicts import VerdictResult

from pages._server import cache

from pages._framework import datasource

#: The core types a page result may hold, by name (each has ``to_dict``/``from_dict``).
CORE_TYPES: dict[str, type] = {cls.__name__: cls for cls in (
    ImportanceResult, ImportanceMoments, VerdictResult, ChanceLevels)}

_PART, _CORE = "__part__", "__core__"

# id(object) -> (object, key) of the parts :func:`shared` returned in the current run.
_run: ContextVar[dict | None] = ContextVar("varimp_parts", default=None)


@contextmanager
def collecting() -> Iterator[None]:
    """Note the parts :func:`shared` returns until the block ends (one page run)."""
    token = _run.set({})
    try:
        yield
    finally:
        _run.reset(token)


def part_key(name: str, data: Any, kwargs: Mapping[str, Any]) -> str:
    """Key of the part ``name`` of ``data`` (a ``DataChoice``, whose canonical parameters
    are memoised, or a mapping of data parameters) under the core's ``kwargs``."""
    canonical = data.canonical if hasattr(data, "canonical") else \
        datasource.canonical_params(data)
    return cache.key_for(name, canonical, dict(kwargs))


def shared(name: str, data: Any, kwargs: Mapping[str, Any], fn: Callable[[], Any], *,
           on_wait: Callable[[], None] | None = None) -> Any:
    """The core result ``fn()`` of ``(name, data, kwargs)``, computed once per cache.

    Parameters
    ----------
    name : str
        The part's kind ("importances", "moments").
    data : DataChoice or mapping
        The data (part of the key, by its canonical parameters).
    kwargs : mapping
        The core's keyword arguments (part of the key).
    fn : callable
        Returns an object of one of :data:`CORE_TYPES`; called only on a miss, under the
        key's compute-once lock (:func:`pages._server.store.compute_once`).
    on_wait : callable, optional
        Called while another process computes the same part.

    Returns
    -------
    object
        ``fn()``'s object itself when computed here (serialised once, never read back);
        else the stored one, rebuilt once by its ``from_dict``.
    """
    key = part_key(name, data, kwargs)
    made: list = []

    def make() -> dict:
        obj = fn()
        made.append(obj)
        return {_CORE: type(obj).__name__, "value": obj.to_dict()}

    stored = cache.get_or_compute(key, make, on_wait=on_wait)
    obj = made[0] if made else _rebuild(stored)
    run = _run.get()
    if run is not None:
        run[id(obj)] = (obj, key)
    return obj


def put(name: str, data: Any, kwargs: Mapping[str, Any], obj: Any) -> Any:
    """Store ``obj``, computed by the caller, as the part ``(name, data, kwargs)``.

    For results made together but kept apart (the measures of one forest): each is
    serialised once, here, and a page result holding it refers to it.  Returns ``obj``.
    """
    key = part_key(name, data, kwargs)
    cache.put_json(key, {_CORE: type(obj).__name__, "value": obj.to_dict()})
    run = _run.get()
    if run is not None:
        run[id(obj)] = (obj, key)
    return obj


def has(name: str, data: Any, kwargs: Mapping[str, Any]) -> bool:
    """True when the part is in the cache (nothing is read or computed)."""
    return part_key(name, data, kwargs) in cache.get_cache()


def peek(name: str, data: Any, kwargs: Mapping[str, Any]) -> Any | None:
    """The stored part, rebuilt, or None (nothing is computed)."""
    key = part_key(name, data, kwargs)
    stored = cache.get_json(key)
    if stored is None:
        return None
    obj = _rebuild(stored)
    run = _run.get()
    if run is not None:   # a page result holding it refers to it, as to a computed one
        run[id(obj)] = (obj, key)
    return obj


def _rebuild(stored: Mapping[str, Any]) -> Any:
    return CORE_TYPES[stored[_CORE]].from_dict(stored["value"])


def encode(result: Any) -> Any:
    """The JSON-able form of a page result (its one serialisation).

    A value that is a part of this run becomes a reference to its key; another core
    object becomes its ``to_dict()`` tagged with its type; a dict is encoded value by
    value (a page's results by measure); anything else (JSON values, a result that is
    not a dict) is kept as it is.
    """
    if not isinstance(result, Mapping):
        return result
    run = _run.get() or {}

    def one(value: Any) -> Any:
        if id(value) in run and run[id(value)][0] is value:
            return {_PART: run[id(value)][1]}
        if type(value).__name__ in CORE_TYPES and isinstance(
                value, CORE_TYPES[type(value).__name__]):
            return {_CORE: type(value).__name__, "value": value.to_dict()}
        if isinstance(value, Mapping):
            return {name: one(v) for name, v in value.items()}
        return value

    return one(result)


def part_keys(stored: Any) -> list[str]:
    """The keys of the parts a stored page result refers to (in its dicts too)."""
    if not isinstance(stored, Mapping):
        return []
    if _PART in stored:
        return [stored[_PART]]
    return [k for v in stored.values() if _CORE not in (v if isinstance(v, Mapping) else ())
            for k in part_keys(v)]


class _Evicted(Exception):
    pass


def decode(stored: Any) -> Any | None:
    """A stored page result with its core objects rebuilt (each once) and its parts read;
    None when the cache has evicted one of its parts (the result is then a miss)."""
    if not isinstance(stored, Mapping):
        return stored

    def one(value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        if _PART in value:
            part = cache.get_json(value[_PART])
            if part is None:
                raise _Evicted
            return _rebuild(part)
        if _CORE in value:
            return _rebuild(value)
        return {name: one(v) for name, v in value.items()}

    try:
        return one(stored)
    except _Evicted:
        return None
