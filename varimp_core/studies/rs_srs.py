"""Random Subspace against Sequential Random Subspace, as independent (seed, method) runs.

The comparison of the slides' part 3 (Geurts 2016): for each seed, the data
is split once into training and test rows, and RS and SRS
(:func:`varimp_core.studies.selection.subspace_selection`) each grow T trees
on the same split (a paired comparison); the curves of AUPRC and test
accuracy against the number of trees are averaged over the seeds.

Each (seed, method) run is independent and takes and returns JSON
(:func:`selection_run`), so :func:`compare_subspace_methods` can hand the
runs to a ``mapper`` (other processes or machines: the dashboard's Celery
fan-out) and gets the numbers of a local run, whatever the order in which
they finish.  The data of a run is a :class:`SplitData`: Madelon-like data
drawn afresh per seed (:func:`varimp_core.studies.selection.madelon_split`, as
:func:`varimp_core.studies.selection.madelon_curves` draws it), or any table
split at random into two thirds and one third (:func:`random_split`).

References
----------
.. [1] P. Geurts, "Random forests variable importances: towards a better
   understanding and large-scale feature selection", CIRM, Feb 2016 (slides).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict, from_jsonable, to_jsonable
from varimp_core.studies.selection import (MADELON_IRRELEVANT, SplitData, SubspaceSelection,
                                           subspace_selection, tidy_runs)

__all__ = ["SubspaceComparison", "RUN_OPTIONS", "SOURCES", "random_split", "study_source",
           "check_study", "selection_run", "compare_subspace_methods"]

#: The options of :func:`subspace_selection` that a study's settings carry to every run.
RUN_OPTIONS = ("subspace_size", "alpha", "max_features", "n_estimators", "min_sampled", "beta")
#: Where a study's data come from: Madelon-like data with k irrelevant features (and the
#: 20 relevant ones of Guyon's design), or the data at hand.
SOURCES = {**{str(k): f"Madelon, {k:,} irrelevant (p = {k + 20:,})" for k in MADELON_IRRELEVANT},
           "data": "The data above"}


def study_source(source: str, data: Any = None,
                 n_features: int | None = None) -> tuple[dict, int | None]:
    """The JSON source of a study's runs and its number of features p.

    Parameters
    ----------
    source : str
        A key of :data:`SOURCES`: the number of irrelevant Madelon features, or ``"data"``.
    data : JSON value, optional
        What names the data at hand (for ``"data"``), passed on to the runs as it is.
    n_features : int, optional
        p of the data at hand (None: unknown).

    Returns
    -------
    (dict, int or None)
        ``{"kind": "madelon", "irrelevant": k}`` with p = 20 + k, or
        ``{"kind": "data", "data": data}`` with ``n_features``.
    """
    if source == "data":
        return {"kind": "data", "data": data}, n_features
    if source not in SOURCES:
        raise ValueError(f"The RS/SRS problem must be one of {', '.join(SOURCES)}, not "
                         f"{source!r}.")
    return {"kind": "madelon", "irrelevant": int(source)}, 20 + int(source)


def check_study(settings: Mapping[str, Any], *, n_features: int | None,
                max_trees: int) -> None:
    """Raise a sentence when a study's settings cannot run together.

    Parameters
    ----------
    settings : mapping
        ``subspace_size`` q, ``max_features`` K (None: q + 1), ``n_seeds`` and
        ``n_estimators`` T.
    n_features : int or None
        p of the data (None: unknown); q is at most p.
    max_trees : int
        The most trees a study may grow: seeds x 2 methods x T.

    Examples
    --------
    >>> check_study({"subspace_size": 5, "max_features": 7, "n_seeds": 1,
    ...              "n_estimators": 10}, n_features=9, max_trees=100)
    Traceback (most recent call last):
    ...
    ValueError: K (candidates per node) must be a whole number from 1 to 6 (q + 1), not 7.
    """
    q, K = settings["subspace_size"], settings["max_features"]
    if n_features is not None and q > n_features:
        raise ValueError(f"Subspace size q must be a whole number from 1 to {n_features:,} "
                         f"(the number of inputs), not {q:,}.")
    if K is not None and K > q + 1:
        raise ValueError(f"K (candidates per node) must be a whole number from 1 to {q + 1:,} "
                         f"(q + 1), not {K:,}.")
    trees = 2 * settings["n_seeds"] * settings["n_estimators"]
    if trees > max_trees:
        raise ValueError(f"{settings['n_seeds']} seed(s) \u00d7 2 methods \u00d7 T = "
                         f"{trees:,} trees is more than the limit of {max_trees:,}; lower T "
                         "or the seeds.")


def random_split(X, y, random_state: int, *, variables: Iterable[str],
                 relevant: Iterable[str] | None = None) -> SplitData:
    """A random two-thirds / one-third split of the rows into training and test rows.

    The rows are shuffled by ``numpy.random.default_rng(random_state).permutation``;
    the first :math:`\\lfloor 2n/3 \\rfloor` train and the others test.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    random_state : int
    variables : sequence of str
    relevant : sequence of str, optional

    Returns
    -------
    SplitData

    Raises
    ------
    ValueError
        With fewer than 6 rows (two to train and one to test are too few to compare).
    """
    X, y = np.asarray(X), np.asarray(y)
    n = X.shape[0]
    if n < 6:
        raise ValueError(f"This data has {n} rows; RS/SRS needs at least 6 (two thirds "
                         "to train, one third to test).")
    order = np.random.default_rng(random_state).permutation(n)
    train, test = order[:(2 * n) // 3], order[(2 * n) // 3:]
    return SplitData(X[train], y[train], X[test], y[test], tuple(variables),
                     None if relevant is None else tuple(relevant))


def selection_run(data: SplitData, *, method: str, random_state: int, subspace_size: int = 50,
                  alpha: float = 0.5, max_features: int | None = None, n_estimators: int = 300,
                  min_sampled: int = 5, beta: float = 0.95, keep_selection: bool = True,
                  progress: Callable[[int, int], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> dict:
    """One run of a comparison: ``method`` on one seed's split, as JSON.

    Parameters
    ----------
    data : SplitData
    method : {"rs", "srs"}
    random_state : int
        Seeds the run (subspaces, probes, trees), as in :func:`subspace_selection`.
    subspace_size, alpha, max_features, n_estimators, min_sampled, beta
        As in :func:`subspace_selection`.
    keep_selection : bool, default=True
        Return the whole :class:`SubspaceSelection` (per-feature arrays); a
        study keeps it for one seed only, the curves for all.
    progress : callable, optional
        ``progress(trees_done, n_estimators)``.
    should_stop : callable, optional
        Asked before each tree; True ends the run with the trees grown so far.

    Returns
    -------
    dict
        Plain JSON types: ``curve`` (the run's curve, see
        :func:`varimp_core.serialize.to_jsonable`), ``n_estimators`` (trees
        grown), ``selection`` (:meth:`SubspaceSelection.to_dict`, or None),
        ``stopped``, ``p`` (number of features) and ``truth_known``.
    """
    res = subspace_selection(
        data.X_train, data.y_train, method=method, subspace_size=subspace_size, alpha=alpha,
        max_features=max_features, n_estimators=n_estimators, min_sampled=min_sampled,
        beta=beta, random_state=random_state, variables=data.variables, relevant=data.relevant,
        X_test=data.X_test, y_test=data.y_test, should_stop=should_stop, progress=progress)
    return {"curve": to_jsonable(res.curve), "n_estimators": int(res.n_estimators),
            "selection": res.to_dict() if keep_selection else None, "stopped": bool(res.stopped),
            "p": len(data.variables), "truth_known": data.relevant is not None}


@dataclass(frozen=True)
class SubspaceComparison:
    """Result of :func:`compare_subspace_methods`.

    Attributes
    ----------
    curves : pandas.DataFrame
        One row per (method, seed, checkpoint): ``method``, ``p``, ``seed``,
        ``n_trees``, ``auprc``, ``accuracy``, ``n_selected``, ``precision``,
        ``recall`` (the columns of :func:`madelon_curves`).
    selections : dict of str to SubspaceSelection
        The selection of each method on seed 0, when that run was done.
    p : int or None
        Number of features (None when no run finished).
    truth_known : bool
        The truly relevant features are known (AUPRC, precision and recall).
    trees_asked, trees_done : int
        Trees of all runs, asked for and grown.
    partial : bool
        The study was stopped: some runs are missing or cut short.
    """

    curves: pd.DataFrame
    selections: dict = field(default_factory=dict)
    p: int | None = None
    truth_known: bool = False
    trees_asked: int = 0
    trees_done: int = 0
    partial: bool = False

    def final(self) -> pd.DataFrame:
        """Each method's last checkpoint, averaged over the seeds.

        Returns
        -------
        pandas.DataFrame
            Indexed by method: the mean over the seeds of ``n_trees``,
            ``auprc`` and ``accuracy`` at each (method, seed) run's largest
            number of trees.
        """
        df = self.curves
        last = df[df.groupby(["method", "seed"])["n_trees"].transform("max") == df["n_trees"]]
        return last.groupby("method")[["n_trees", "auprc", "accuracy"]].mean()

    def selections_frame(self) -> pd.DataFrame:
        """The seed-0 selections: :meth:`SubspaceSelection.to_frame` of each, with ``method``."""
        df = pd.concat([s.to_frame().assign(method=m) for m, s in self.selections.items()],
                       ignore_index=True)
        return df[["method", *[c for c in df.columns if c != "method"]]]

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "SubspaceComparison":
        """The SubspaceComparison that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, dict(d))


def compare_subspace_methods(run: Callable[..., dict], study: Mapping[str, Any], *,
                             n_seeds: int, methods: Iterable[str] = ("rs", "srs"),
                             mapper: Callable | None = None,
                             progress: Callable[[int, int, str], None] | None = None,
                             should_stop: Callable[[], bool] | None = None,
                             partial: Callable[["SubspaceComparison"], None] | None = None
                             ) -> SubspaceComparison:
    """Run every (seed, method) of a comparison, here or by a ``mapper``, and gather the curves.

    Parameters
    ----------
    run : callable
        ``run(study, seed, method, *, progress, should_stop) -> dict``: one run
        as :func:`selection_run` returns it, on the seed's split (``progress(done)``
        counts its trees).  With a ``mapper`` it must take and return JSON.
    study : mapping
        The settings every run gets as they are; ``study["n_estimators"]`` is T.
    n_seeds : int
        Seeds 0 to ``n_seeds - 1``; each draws its own data (or split).
    methods : iterable of {"rs", "srs"}, default=("rs", "srs")
    mapper : callable, optional
        Runs the pieces elsewhere: ``mapper(args, progress=report, should_stop=...)``
        with ``args`` the list of ``(study, seed, method)`` tuples returns an
        iterator of ``(index, result)`` pairs in any order, and calls
        ``report(index, trees_done)`` as pieces grow.
    progress : callable, optional
        ``progress(trees_done, trees_asked, where)``: ``where`` names the run
        growing ("seed 0, RS") or, with a mapper, the runs done ("1 of 4 runs done").
    should_stop : callable, optional
        Locally, asked before each tree; the runs not started are left out.
    partial : callable, optional
        ``partial(comparison)``: the runs finished so far (``partial`` set), after each
        run but the last, so that a page draws the RS curves while SRS grows.  It does
        not change the runs.

    Returns
    -------
    SubspaceComparison
        The same numbers with or without a mapper.

    Examples
    --------
    >>> from varimp_core.studies.rs_srs import selection_run
    >>> from varimp_core.studies.selection import madelon_split
    >>> def run(study, seed, method, **kw):
    ...     return selection_run(madelon_split(30, seed, n_train=200, n_test=100),
    ...                          method=method, random_state=seed, n_estimators=5,
    ...                          subspace_size=10, keep_selection=seed == 0, **kw)
    >>> out = compare_subspace_methods(run, {"n_estimators": 5}, n_seeds=2)
    >>> out.trees_done, sorted(out.selections), out.p
    (20, ['rs', 'srs'], 50)
    """
    runs = [(seed, m) for seed in range(int(n_seeds)) for m in methods]
    total, results, trees = len(runs) * int(study["n_estimators"]), {}, {}

    def report(i: int, done: int) -> None:
        trees[i] = int(done)
        if progress is not None:
            where = f"seed {runs[i][0]}, {runs[i][1].upper()}" if mapper is None else \
                f"{len(results)} of {len(runs)} runs done"
            progress(sum(trees.values()), total, where)

    def here():
        for i, (seed, method) in enumerate(runs):
            out = run(study, seed, method, progress=lambda d, i=i: report(i, d),
                      should_stop=should_stop)
            yield i, out
            if out["stopped"]:
                return

    pieces = here() if mapper is None else mapper(
        [(study, *r) for r in runs], progress=report, should_stop=should_stop)
    for i, out in pieces:
        results[i] = out
        report(i, out["n_estimators"])
        if partial is not None and len(results) < len(runs) and not out["stopped"]:
            partial(_comparison(runs, results, total))
    return _comparison(runs, results, total)


def _comparison(runs: list, results: Mapping[int, dict], total: int) -> SubspaceComparison:
    """The :class:`SubspaceComparison` of the finished ``results`` (index into ``runs``)."""
    frames = [from_jsonable(results[i]["curve"]).assign(method=runs[i][1], p=results[i]["p"],
                                                         seed=runs[i][0]) for i in sorted(results)]
    last = results[max(results)] if results else {"p": None, "truth_known": False}
    return SubspaceComparison(
        curves=tidy_runs(frames), p=last["p"],
        selections={runs[i][1]: SubspaceSelection.from_dict(r["selection"])
                    for i, r in results.items() if r["selection"] is not None},
        truth_known=last["truth_known"], trees_asked=total,
        trees_done=sum(r["n_estimators"] for r in results.values()),
        partial=len(results) < len(runs) or any(r["stopped"] for r in results.values()))
