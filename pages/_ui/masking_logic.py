"""Logic behind the Masking page's callbacks, as plain functions tests can call.

The page shows how importances move with K (or with the depth limit) on a
built-in problem with an exact distribution (LED, XOR or SYM), with 0..6
irrelevant fair bits added and optionally a noisy copy of one variable.  Every
number comes from :mod:`varimp_core.masking`; results are cached server-side
by a hash of the settings.

The page's constants, URL parameters and problems live in
:mod:`pages._ui.masking_state`; this module turns control values into
canonical settings, computes, caches and summarises the importances, and
re-exports the state's names (the page and the tests use ``masking_logic``
only).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import pandas as pd

from varimp_core.studies.masking_copy import add_noisy_copy
from varimp_core.studies.masking import importance_vs_depth, importance_vs_k, sampled_vs_k
from varimp_core.problems.registry import get_problem, parse_spec

from . import cache, limits
from .common import placeholder_figure
from .state import whole_number
from .masking_state import (DEFAULT_PROBLEM, MAX_FLIP, MAX_IRRELEVANT, MAX_TREES, NO_COPY,
                            PARAMS, PREFIX, PROBLEMS, copy_options, full_spec, initial_state,
                            n_inputs, page_query, problem_controls, problem_description,
                            problem_options, split_spec)

__all__ = [
    "PREFIX",
    "PROBLEMS",
    "MAX_IRRELEVANT",
    "MAX_TREES",
    "PARAMS",
    "problem_options",
    "split_spec",
    "full_spec",
    "copy_options",
    "initial_state",
    "settings_from_controls",
    "page_query",
    "n_inputs",
    "build_table",
    "exact_key",
    "sampled_key",
    "compute_exact",
    "compute_sampled",
    "frames",
    "summary_sentences",
    "problem_description",
    "problem_controls",
    "n_inputs_or_default",
    "placeholder_figure",
    "settings_from_state",
    "query_from_controls",
]


# -- controls -------------------------------------------------------------------------
def n_inputs_or_default(base, irrelevant, copy) -> int:
    """:func:`n_inputs` of control values; the default problem's p when they are invalid."""
    try:
        base_spec, extra = split_spec(base or DEFAULT_PROBLEM)
        irr = _whole(irrelevant, "number of irrelevant variables", 0, MAX_IRRELEVANT, 0)
        return n_inputs(base_spec, irr + extra, None if copy in (None, "", NO_COPY) else copy)
    except ValueError:
        return n_inputs(DEFAULT_PROBLEM, 0, None)


def settings_from_controls(*, base, irrelevant, copy, flip, semantics, axis, k, depth) -> dict:
    """Canonical settings of the exact computation from control values.

    Raises
    ------
    ValueError
        With a sentence, for a value out of range (the controls only allow
        valid values; this guards crafted requests).
    """
    base_spec = base or DEFAULT_PROBLEM
    name, _ = parse_spec(base_spec)
    if name not in PROBLEMS:
        raise ValueError("Choose LED, XOR or SYM: the Masking page needs a small exact "
                         "distribution.")
    base_spec, extra = split_spec(base_spec)
    irr = _whole(irrelevant, "number of irrelevant variables", 0, MAX_IRRELEVANT, 0) + extra
    if irr > MAX_IRRELEVANT:
        raise ValueError(f"Add at most {MAX_IRRELEVANT} irrelevant variables.")
    copy = None if copy in (None, "", NO_COPY) else str(copy)
    if copy is not None and copy not in (get_problem(base_spec).relevant or ()):
        raise ValueError(f"{base_spec} has no variable {copy} to copy.")
    try:
        flip = float(flip if flip is not None else 0.0)
    except (TypeError, ValueError):
        raise ValueError(f"The copy noise must be a probability, got {flip!r}.") from None
    if not 0.0 <= flip <= MAX_FLIP:
        raise ValueError(f"The copy noise must be from 0 to {MAX_FLIP:g}, got {flip:g}.")
    if semantics not in ("id3", "sklearn"):
        raise ValueError(f"K semantics must be id3 or sklearn, got {semantics!r}.")
    if axis not in ("K", "depth"):
        raise ValueError(f"The x axis must be K or depth, got {axis!r}.")
    p = n_inputs(base_spec, irr, copy)
    k = min(_whole(k, "K", 1, 64, 1), p)
    depth = None if depth in (None, "", "full") else _whole(depth, "maximum depth", 1, 64, None)
    if depth is not None and depth >= p:
        depth = None
    return {"base": base_spec, "irrelevant": irr, "copy": copy,
            "flip": round(flip, 4) if copy else None, "semantics": semantics, "axis": axis,
            "k": k if axis == "depth" else None, "depth": depth if axis == "K" else None}


def settings_from_state(s: Mapping[str, Any]) -> dict:
    """:func:`settings_from_controls` of a state from :func:`initial_state`."""
    return settings_from_controls(base=s["base"], irrelevant=s["irrelevant"], copy=s["copy"],
                                  flip=s["flip"], semantics=s["semantics"], axis=s["axis"],
                                  k=s["k"], depth=s["depth"])


def query_from_controls(controls: Mapping[str, Any], *, sampled, trees, forest_seed
                        ) -> str | None:
    """URL query of the current control values, or None when they are not valid."""
    try:
        settings = settings_from_controls(**controls)
    except ValueError:
        return None

    def whole(value, low, high, default):
        try:
            return _whole(value, "value", low, high, default)
        except ValueError:
            return default

    p = n_inputs(settings["base"], settings["irrelevant"], settings["copy"])
    depth = controls.get("depth")
    depth = whole(None if depth == "full" else depth, 1, p - 1, None) if p > 1 else None
    return page_query(settings, sampled=bool(sampled), trees=whole(trees, 1, limits.max_trees(MAX_TREES), 200),
                      forest_seed=whole(forest_seed, 0, 2**32 - 1, 0),
                      k=whole(controls.get("k"), 1, p, 1), depth=depth)


def _whole(value, what, low, high, default):
    return whole_number(value, what, low, high, default, grouped=False)


# -- computing --------------------------------------------------------------------------
def build_table(settings: Mapping[str, Any]):
    """The exact table of the settings: problem, irrelevant bits, then the noisy copy.

    The copy is placed right after the problem's relevant variables, so the
    colours of X1..Xr never change when irrelevant variables come and go.
    """
    spec = full_spec(settings["base"], settings["irrelevant"])
    problem = get_problem(spec)
    table = problem.exact_table()
    if settings.get("copy"):
        position = len(problem.relevant or ())
        table = add_noisy_copy(table, settings["copy"], settings.get("flip") or 0.0,
                               position=position)
    return table


def _records(df: pd.DataFrame) -> dict:
    return {c: df[c].tolist() for c in df.columns}


def exact_key(settings: Mapping[str, Any]) -> str:
    """Cache key of the exact view of canonical settings."""
    return cache.key_for("masking-exact", dict(settings))


def sampled_key(settings: Mapping[str, Any], trees: int, forest_seed: int) -> str:
    """Cache key of the sampled forests: the settings without the axis, trees and seed."""
    s = {k: v for k, v in settings.items() if k not in ("axis", "k")}
    return cache.key_for("masking-sampled", s, int(trees), int(forest_seed))


def compute_exact(settings: Mapping[str, Any], progress: Callable | None = None) -> dict:
    """Exact importances of the settings (cached): the ``masking-exact`` store value.

    Returns
    -------
    view : dict
        ``key``, ``settings``, ``x`` ("K" or "depth"), ``records`` (columns of
        the tidy table), ``variables``, ``information`` (bits), ``p``,
        ``spec`` and ``copy_name``.

    Raises
    ------
    ValueError
        With a sentence, e.g. when the exact computation is over its budget.
    """
    settings = dict(settings)
    key = exact_key(settings)

    def compute() -> dict:
        table = build_table(settings)
        if progress is not None:
            progress(0, 1, f"Exact recursion over {table.n_features} variables\u2026")
        if settings["axis"] == "K":
            df = importance_vs_k(table, max_depth=settings["depth"],
                                 k_semantics=settings["semantics"])
        else:
            df = importance_vs_depth(table, max_features=settings["k"],
                                     k_semantics=settings["semantics"])
        copy_name = None
        if settings.get("copy"):
            copy_name = next(v for v in table.variables
                             if v.startswith(settings["copy"] + "'"))
        return {"records": _records(df), "x": settings["axis"],
                "variables": list(table.variables), "information": df.attrs["information"],
                "p": table.n_features,
                "spec": full_spec(settings["base"], settings["irrelevant"]),
                "copy_name": copy_name}

    view = cache.get_or_compute(key, compute)
    if progress is not None:
        progress(1, 1, "")
    return dict(view, key=key, settings=settings)


def compute_sampled(settings: Mapping[str, Any], *, trees: int, forest_seed: int,
                    progress: Callable | None = None) -> dict:
    """Sampled forests for every K of the settings (cached): the ``masking-sampled`` value.

    Returns
    -------
    view : dict
        ``key`` (see :func:`sampled_key`) and ``records`` of
        :func:`varimp_core.masking.sampled_vs_k`.
    """
    trees = _whole(trees, "number of trees", 1, limits.max_trees(MAX_TREES), 200)
    forest_seed = _whole(forest_seed, "forest seed", 0, 2**32 - 1, 0)
    key = sampled_key(settings, trees, forest_seed)

    def compute() -> dict:
        table = build_table(settings)
        df = sampled_vs_k(table, n_estimators=trees, random_state=forest_seed,
                          max_depth=settings.get("depth"), k_semantics=settings["semantics"],
                          progress=progress)
        return {"records": _records(df)}

    view = cache.get_or_compute(key, compute)
    return dict(view, key=key, trees=trees, forest_seed=forest_seed)


def frames(exact: Mapping[str, Any] | None, sampled: Mapping[str, Any] | None = None
           ) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """DataFrames from the stores; sampled only when it belongs to the exact settings."""
    if not exact or not exact.get("records"):
        return None, None
    df = pd.DataFrame(exact["records"])
    ds = None
    if sampled and sampled.get("records") and exact.get("x") == "K" and \
            sampled.get("key") == sampled_key(exact["settings"], sampled.get("trees", 0),
                                              sampled.get("forest_seed", 0)):
        ds = pd.DataFrame(sampled["records"])
    return df, ds


def _fmt(v: float) -> str:
    return f"{v:.3f}"


def _order(d: pd.DataFrame) -> str:
    """``"X5 > X2 = X3"``: variables with a positive importance, most important first."""
    d = d[d["importance"] > 1e-9].sort_values(["rank", "variable"])
    groups = d.groupby("rank", sort=True)["variable"].apply(" = ".join)
    return " > ".join(groups.tolist())


def summary_sentences(exact: Mapping[str, Any]) -> list[str]:
    """What to notice in the current view, in a few sentences with the core's numbers."""
    df, _ = frames(exact)
    if df is None:
        return []
    s = exact["settings"]
    p = exact["p"]
    info = exact.get("information")
    out = []
    x = exact["x"]
    sums = df.groupby(x)["importance"].sum()
    if x == "K":
        if s.get("depth") is None and info is not None:
            spread = (f"{sums.mean():.4f} bits" if sums.max() - sums.min() < 5e-5 else
                      f"{sums.min():.4f}\u2013{sums.max():.4f} bits")
            out.append(f"{p} inputs; I(X;Y) = {info:.4f} bits. The importances sum to "
                       f"{spread} at every K (Theorem 2).")
        else:
            out.append(f"{p} inputs; trees stop at depth {s['depth']}, so the sums "
                       f"({sums.min():.3f}\u2013{sums.max():.3f} bits) stay below "
                       f"I(X;Y) = {info:.3f} bits.")
        k1 = df[df.K == 1].set_index("variable")["importance"]
        kp = df[df.K == df.K.max()].set_index("variable")["importance"]
        if s["irrelevant"]:
            out.append(f"The {s['irrelevant']} irrelevant variable"
                       f"{'s get' if s['irrelevant'] > 1 else ' gets'} 0 at K=1 and leave the "
                       "others' K=1 values unchanged (Theorems 3 and 5); at K>1 they dilute the "
                       "draws, which damps masking.")
        copy_name = exact.get("copy_name")
        if copy_name:
            orig = s["copy"]
            out.append(f"{copy_name} copies {orig} with {s['flip']:g} noise: at K=1 {orig} has "
                       f"{_fmt(k1[orig])} and {copy_name} {_fmt(k1[copy_name])} bits; at K={p} "
                       f"{orig} has {_fmt(kp[orig])} and {copy_name} {_fmt(kp[copy_name])} "
                       f"\u2014 {'masked' if kp[copy_name] < 0.5 * k1[copy_name] else 'not masked'}"
                       f" by {orig}.")
        first, last = _order(df[df.K == 1]), _order(df[df.K == df.K.max()])
        if first != last:
            out.append(f"The order changes: {first} at K=1, {last} at K={p}.")
    else:
        out.append(f"{p} inputs, K = {s['k']}. Trees stopped at depth D keep the parts of the "
                   "importances from nodes above depth D (Proposition 6 at K=1); the full-depth "
                   f"sum {sums.iloc[-1]:.4f} bits is I(X;Y).")
    return out
