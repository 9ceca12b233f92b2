"""Core results every page shares, cached by a hash of the data and the settings.

Several pages draw the same importances (Importances, Decomposition, Masking
...): :func:`cached_importances` computes them once per server cache, a part
(:mod:`pages._framework.parts`) keyed by the data choice and the core's own keyword
arguments (scikit-learn's vocabulary), and :func:`make_loader` loads the data at most
once per job, only on a miss.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from varimp_core.api import compute_importances
from varimp_core.exact.moments import ImportanceMoments, exact_moments
from varimp_core.result import ImportanceResult

from pages._server import limits

from pages._framework import datasource, parts

SAMPLED = ("forest", "sklearn-rf", "sklearn-et")


def width_checked_loader(data, method: str, progress: Callable | None = None
                         ) -> tuple[Callable, int]:
    """The data's loader and its number of inputs p, refusing the exact method past the
    server's :func:`limits.max_exact_features` with a sentence (before loading, when the
    data choice knows p)."""
    load = make_loader(data.as_dict, progress)
    p = data.n_features()
    p = load().table.n_features if p is None else p
    most = limits.max_exact_features()
    if method == "exact" and p > most:
        raise ValueError(f"The exact method accepts at most {most} input variables on this "
                         f"server and this data has {p}; choose a sampled method.")
    return load, p


def make_loader(data: Mapping[str, Any], progress: Callable | None = None) -> Callable:
    """A zero-argument function loading the data once (on its first call)."""
    loaded: dict[str, Any] = {}

    def load():
        if "prepared" not in loaded:
            if progress is not None:
                progress(0, 1, "Loading the data\u2026")
            loaded["prepared"] = datasource.load_prepared(data)
        return loaded["prepared"]

    return load


def cached_importances(data: Any, kwargs: Mapping[str, Any], load: Callable,
                       progress: Callable | None = None, partial: Callable | None = None
                       ) -> ImportanceResult:
    """``compute_importances(load(), **kwargs)``, a part shared by every page
    (:func:`pages._framework.parts.shared`).

    Parameters
    ----------
    data : DataChoice or mapping
        The data (part of the key, by its canonical parameters).
    kwargs : mapping
        Keyword arguments of :func:`varimp_core.api.compute_importances`
        (``method``, ``max_features``, ``max_depth``, ``k_semantics``,
        ``n_estimators``, ``bootstrap``, ``random_state``...).
    load : callable
        Returns the core's ``PreparedData``; called only on a miss.
    progress, partial : callable, optional
        ``progress(done, total)`` of the sampled methods; ``partial(result so far)``.

    Returns
    -------
    ImportanceResult
        The object computed here, or the stored one rebuilt once.
    """
    return parts.shared(
        "importances", data, kwargs, lambda: compute_importances(
            load(), progress=progress, n_jobs=limits.n_jobs(), partial=partial, **kwargs),
        on_wait=None if progress is None else lambda: progress(0, None))


def has_importances(data: Any, kwargs: Mapping[str, Any]) -> bool:
    """True when :func:`cached_importances` would find its result (nothing is read)."""
    return parts.has("importances", data, kwargs)


def peek_importances(data: Any, kwargs: Mapping[str, Any]) -> ImportanceResult | None:
    """The cached result of :func:`cached_importances`, or None (nothing is computed)."""
    return parts.peek("importances", data, kwargs)


def exact_reference(kwargs: Mapping[str, Any]) -> dict:
    """Keyword arguments of the exact values drawn over a sampled method.

    Same K, depth and impurity; scikit-learn forests read K their own way, so their
    reference uses ``sklearn`` semantics.
    """
    semantics = kwargs.get("k_semantics", "sklearn")
    if kwargs["method"] in ("sklearn-rf", "sklearn-et"):
        semantics = "sklearn"
    return {"method": "exact", "max_features": kwargs["max_features"],
            "max_depth": kwargs.get("max_depth"), "k_semantics": semantics,
            "criterion": kwargs.get("criterion", "entropy")}


def moments_kwargs(result: ImportanceResult) -> dict:
    """Keyword arguments of :func:`exact_moments` for an exact result: its own settings."""
    par = result.parameters
    kw = {"method": result.method, "max_features": par.get("max_features", 1),
          "max_depth": par.get("max_depth"), "criterion": par.get("criterion", "entropy")}
    if result.method == "exact":
        kw["k_semantics"] = par.get("k_semantics", "id3")
    elif par.get("min_samples_leaf", 1) != 1:
        kw["min_samples_leaf"] = par["min_samples_leaf"]
    return kw


def cached_moments(data: Any, exact: ImportanceResult, load) -> ImportanceMoments:
    """The exact mean and per-tree covariance of ``exact``'s method, a shared part
    (:func:`pages._framework.parts.shared`).

    Raises
    ------
    ValueError
        With the core's sentence when the covariance's memory is beyond its limit.
    """
    kw = moments_kwargs(exact)
    return parts.shared("moments", data, kw, lambda: exact_moments(load(), **kw))
