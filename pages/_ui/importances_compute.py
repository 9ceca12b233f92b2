"""Computing behind the Importances page, through the shared cache.

Every number comes from the core (:func:`varimp_core.api.compute_importances`)
through :mod:`pages._ui.cache`; other pages with the same data and settings
share the entries.  :mod:`pages._ui.importances_logic` re-exports all of it.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from varimp_core.api import compute_importances
from varimp_core.exact.information import joint_information
from varimp_core.result import ImportanceResult

from . import cache, datasource, limits
from .importances_render import render
from .importances_state import SAMPLED, data_feature_count

__all__ = [
    "exact_settings_for",
    "make_loader",
    "CacheMiss",
    "cached_result",
    "compute_view",
    "cached_render",
]


def _core_kwargs(settings: Mapping[str, Any]) -> dict:
    kwargs = dict(method=settings["method"], max_features=settings["K"],
                  max_depth=settings.get("depth"), criterion="entropy")
    if "semantics" in settings:
        kwargs["k_semantics"] = settings["semantics"]
    if settings["method"] in SAMPLED:
        kwargs.update(n_estimators=settings["trees"], bootstrap=settings["bootstrap"],
                      random_state=settings["tree_seed"])
    return kwargs


def exact_settings_for(settings: Mapping[str, Any]) -> dict:
    """Settings of the exact reference drawn over a sampled method.

    Same K and depth; scikit-learn forests read K their own way, so their
    reference uses ``sklearn`` semantics.
    """
    semantics = settings.get("semantics", "sklearn")
    if settings["method"] in ("sklearn-rf", "sklearn-et"):
        semantics = "sklearn"
    return {"method": "exact", "K": settings["K"], "depth": settings.get("depth"),
            "semantics": semantics}


def make_loader(data: Mapping[str, Any], progress=None):
    """A zero-argument function loading the data once (on first call), for cache misses."""
    loaded: dict[str, Any] = {}

    def load():
        if "prepared" not in loaded:
            if progress is not None:
                progress(0, 1, "Loading the data\u2026")
            loaded["prepared"] = datasource.load_prepared(data)
        return loaded["prepared"]

    return load


class CacheMiss(Exception):
    """Raised by :func:`compute_view` with ``peek=True`` when something is not cached."""


def _miss(*_args, **_kwargs):
    raise CacheMiss


def cached_result(data: Mapping[str, Any], settings: Mapping[str, Any], load,
                  progress=None, *, peek: bool = False) -> ImportanceResult:
    """The result of ``settings`` on ``data`` from the shared cache, computed on a miss.

    ``load()`` returns the core's ``PreparedData`` (called only on a miss);
    other pages with the same data and settings share the entry.  With
    ``peek=True`` a miss raises :class:`CacheMiss` instead of computing.
    """
    key = cache.key_for("importances", data, dict(settings))
    if peek:
        stored = cache.get_json(key)
        if stored is None:
            raise CacheMiss
        return ImportanceResult.from_dict(stored)
    return cache.get_or_compute_result(
        key, lambda: compute_importances(load(), progress=progress, **_core_kwargs(settings)))


def compute_view(data: Mapping[str, Any], settings: Mapping[str, Any], *,
                 progress=None, peek: bool = False) -> dict:
    """Compute (or read from the cache) what the page shows.

    Parameters
    ----------
    data : mapping
        Data parameters (:mod:`pages._ui.datasource`).
    settings : mapping
        From :func:`settings_from_controls`.
    progress : callable, default=None
        ``progress(done, total, text)``, e.g. :class:`pages._ui.jobs.Progress`.
    peek : bool, default=False
        Only read the cache: raise :class:`CacheMiss` if anything must be
        computed (the page's request-time fast path for cache hits).

    Returns
    -------
    view : dict
        ``result`` (ImportanceResult), ``exact`` (the exact reference for a
        sampled method, or None), ``information`` (I(X;Y) in bits, or None),
        ``notes`` (sentences) and ``p``.

    Raises
    ------
    ValueError, DataError
        With a sentence (unknown table, too many inputs for the exact method ...).
    """
    data = datasource.canonical_params(data)
    say = progress or (lambda *a, **k: None)
    load = _miss if peek else make_loader(data, say)

    p = data_feature_count(data)
    if p is None:
        p = load().table.n_features
    if settings["K"] > p:
        raise ValueError(f"K must be a whole number from 1 to {p} (this data has {p} inputs), "
                         f"got {settings['K']}.")
    notes: list[str] = []
    exact = None
    method = settings["method"]
    most = limits.max_exact_features()
    if method == "exact" and p > most:
        raise ValueError(f"The exact method accepts at most {most} input variables on this "
                         f"server and this data has {p}; choose a sampled method.")
    if method == "exact":
        say(0, 1, "Computing the exact importances\u2026")
    result = cached_result(data, settings, load,
                           progress=(lambda done, total: say(done, total, f"{int(done):,} of "
                                                             f"{int(total):,} trees"))
                           if method in SAMPLED else None, peek=peek)
    if method != "exact":
        if p > most:
            notes.append(f"No exact values are drawn: the exact method handles at most "
                         f"{most} inputs and this data has {p}.")
        elif result.units != "bits":
            notes.append(f"No exact values are drawn: this forest measures {result.units} "
                         "while the exact values are in bits (entropy of the binned target).")
        else:
            say(1, 1, "Computing the exact values\u2026")
            try:
                exact = cached_result(data, exact_settings_for(settings), load, peek=peek)
            except ValueError as exc:
                notes.append(f"No exact values are drawn: {exc}")
    information = result.information
    if information is None and exact is not None:
        information = exact.information
    if information is None and result.units == "bits":
        key = cache.key_for("information", data)
        information = cache.get_json(key) if peek else None
        if information is None:
            information = cache.get_or_compute(key, lambda: joint_information(load().table))
    return {"result": result, "exact": exact, "information": information, "notes": notes,
            "p": p}


def cached_render(data: Mapping[str, Any], settings: Mapping[str, Any], *, progress=None,
                  peek: bool = False) -> dict:
    """:func:`render` of :func:`compute_view`, kept in the cache as JSON.

    Building the figures costs tens of milliseconds, reading them back about
    one: a cached control change is then answered within the request.  With
    ``peek=True`` nothing is computed (:class:`CacheMiss` on a miss).
    """
    from plotly.io.json import to_json_plotly

    data = datasource.canonical_params(data)
    key = cache.key_for("importances-view", data, dict(settings))
    stored = cache.get_json(key)
    if stored is not None:
        return stored
    out = render(compute_view(data, settings, progress=progress, peek=peek))
    out = json.loads(to_json_plotly(out))
    cache.put_json(key, out)
    return out
