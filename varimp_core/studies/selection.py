"""All-relevant feature selection with random subspaces and a random probe.

The "Towards large-scale feature selection" part of Geurts (2016): when no
tree may see more than ``q`` of the ``p`` features,

* **Random Subspace (RS)** grows each tree on ``q`` features drawn uniformly;
* **Sequential Random Subspace (SRS)** keeps a running set ``F`` of features
  found relevant so far and draws ``R``, :math:`\\min(\\lfloor\\alpha q\\rfloor, |F|)`
  features of ``F``, plus ``C``, :math:`q - |R|` features of :math:`V \\setminus R`
  (``alpha = 0`` gives RS back).

In practice every tree also gets a **random probe** and ``F`` holds the
features that

* were drawn more than ``L`` times (``min_sampled``), and
* were more important than the probe in at least a fraction ``beta`` of the
  trees in which they were drawn,

with L = 5 and beta = 95% in the slides' experiments.  The slides do not say
what the probe is; by default it is a permuted copy of one of the tree's
features, drawn at random, so it has a real feature's marginal distribution
and no link to Y (``probe="normal"`` uses a fresh Gaussian column).  The output is the set
``F`` and a ranking of all features by importance, the mean over the T trees
of each tree's unnormalised MDI (0 in the trees that did not draw the feature),
:math:`\\mathrm{Imp}_{q,T}(X)` of the RS slide.

Trees are scikit-learn ``ExtraTreeClassifier`` (Extra-Trees cut points, K =
``max_features`` candidates per node, no bootstrap, fully grown); each tree's
MDI comes from its ``tree_`` arrays by
:func:`varimp_core.forests.sklearn_mdi.tree_mdi_by_depth`.

References
----------
.. [1] P. Geurts, "Random forests variable importances: towards a better
   understanding and large-scale feature selection", CIRM, Feb 2016 (slides).
.. [2] A. Sutera, C. Chatel, G. Louppe, L. Wehenkel and P. Geurts, "Random
   subspace with trees for feature selection under memory constraints",
   arXiv:1709.01177, 2017.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, NamedTuple

import numpy as np
import pandas as pd

from varimp_core.studies import subspace as _s
from varimp_core.result import ImportanceResult
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["SubspaceSelection", "curve_statistics", "draw_subspace", "probe_rule", "subspace_selection",
           "precision_recall", "madelon_curves", "tidy_runs", "MADELON_IRRELEVANT",
           "SplitData", "madelon_split"]

#: Numbers of irrelevant features in the slides' Madelon experiments (p = 500 ... 5500).
MADELON_IRRELEVANT = (480, 1480, 2980, 5480)
# The columns of a study's tidy curves (madelon_curves, tidy_runs).
_CURVE_COLUMNS = ("method", "p", "seed", "n_trees", "auprc", "accuracy", "n_selected",
                  "precision", "recall")


def probe_rule(n_sampled, n_wins, *, min_sampled: int = 5, beta: float = 0.95) -> np.ndarray:
    """Which features the random-probe rule keeps.

    Parameters
    ----------
    n_sampled : array-like of int, shape (n_features,)
        Number of trees whose subspace contained the feature.
    n_wins : array-like of int, shape (n_features,)
        Number of those trees in which the feature's MDI was strictly larger
        than the probe's (the probe is in every tree).
    min_sampled : int, default=5
        L: the feature must have been drawn more than L times.
    beta : float, default=0.95
        Fraction of its trees in which the feature must beat the probe.

    Returns
    -------
    keep : ndarray of bool, shape (n_features,)
        ``(n_sampled > L) & (n_wins >= beta * n_sampled)``.

    Examples
    --------
    >>> probe_rule([6, 5, 20, 20], [6, 5, 19, 18]).tolist()
    [True, False, True, False]
    """
    L, b = _s.check_rule(min_sampled, beta)
    ns, nw = np.asarray(n_sampled), np.asarray(n_wins)
    if ns.shape != nw.shape:
        raise ValueError(f"n_sampled has shape {ns.shape} but n_wins has shape {nw.shape}.")
    if np.any(nw > ns) or np.any(nw < 0):
        raise ValueError("n_wins must lie between 0 and n_sampled for every feature.")
    return _s.rule(ns, nw, L, b)


def draw_subspace(n_features: int, subspace_size: int, found=(), *, alpha: float = 0.5,
                  random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Draw one SRS subspace :math:`Q = R \\cup C` (RS when ``alpha=0`` or F is empty).

    Parameters
    ----------
    n_features : int
        p.
    subspace_size : int
        q, at most p.
    found : array-like of int, default=()
        Indices of F, the features found relevant so far.
    alpha : float, default=0.5
        Largest share of the subspace taken from F.
    random_state : int, Generator or None, default=None

    Returns
    -------
    from_found : ndarray of int
        R: :math:`\\min(\\lfloor \\alpha q \\rfloor, |F|)` distinct indices of F.
    fresh : ndarray of int
        C: :math:`q - |R|` distinct indices of :math:`V \\setminus R` (they may
        include features of F not drawn into R).
    """
    if not _s._is_int(n_features) or n_features < 1:
        raise ValueError(f"n_features={n_features!r} is not allowed: use an integer >= 1.")
    q = _s.check_subspace_size(subspace_size, int(n_features))
    a = _s.check_alpha(alpha)
    f = np.unique(np.asarray(found, dtype=np.intp))
    if f.size and (f[0] < 0 or f[-1] >= n_features):
        raise ValueError(f"found contains indices outside [0, {n_features}).")
    return _s.draw(np.random.default_rng(random_state), int(n_features), q, f, a)


def precision_recall(selected, relevant) -> tuple[float, float]:
    """Precision and recall of a selected set against the true relevant set.

    Precision is NaN when nothing is selected; recall is NaN when nothing is relevant.
    """
    sel, rel = set(selected), set(relevant)
    tp = len(sel & rel)
    precision = tp / len(sel) if sel else float("nan")
    recall = tp / len(rel) if rel else float("nan")
    return precision, recall


@dataclass(frozen=True)
class SubspaceSelection:
    """Result of :func:`subspace_selection`.

    Attributes
    ----------
    variables : tuple of str
    importances : ndarray of shape (n_features,)
        :math:`\\mathrm{Imp}_{q,T}`: mean over the grown trees of each tree's
        unnormalised MDI (bits for entropy), 0 in trees that did not draw the feature.
    n_sampled : ndarray of int, shape (n_features,)
        Trees whose subspace contained the feature.
    n_wins : ndarray of int, shape (n_features,)
        Trees in which the feature beat the probe (all zeros without a probe).
    selected : tuple of str
        F at the end: the probe rule, or (``probe=None``) the features with
        non-zero importance in at least one tree.
    method : {"rs", "srs"}
    parameters : dict
    n_estimators : int
        Trees actually grown (fewer than asked when stopped).
    stopped : bool
        True when ``should_stop()`` ended the run early.
    probe_importances : ndarray of shape (n_estimators,)
        The probe's MDI in each tree (empty without a probe).
    curve : pandas.DataFrame
        One row per checkpoint: ``n_trees``, ``n_selected`` and, when known,
        ``auprc``, ``precision``, ``recall`` (needs ``relevant``) and
        ``accuracy`` (needs ``X_test``, ``y_test``).
    relevant : tuple of str or None
        The true relevant features, when given.
    """

    variables: tuple[str, ...]
    importances: np.ndarray
    n_sampled: np.ndarray
    n_wins: np.ndarray
    selected: tuple[str, ...]
    method: str
    parameters: dict
    n_estimators: int
    stopped: bool = False
    probe_importances: np.ndarray = field(default_factory=lambda: np.zeros(0))
    curve: pd.DataFrame = field(default_factory=pd.DataFrame)
    relevant: tuple[str, ...] | None = None

    @property
    def selected_mask(self) -> np.ndarray:
        chosen = set(self.selected)
        return np.array([v in chosen for v in self.variables], dtype=bool)

    @property
    def importances_when_drawn(self) -> np.ndarray:
        """Mean MDI over the trees that drew each feature (NaN if never drawn)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.n_sampled > 0,
                            self.importances * self.n_estimators / self.n_sampled, np.nan)

    @property
    def ranking(self) -> tuple[str, ...]:
        """Variables by decreasing importance (ties keep the input order)."""
        order = np.argsort(-self.importances, kind="stable")
        return tuple(self.variables[j] for j in order)

    @property
    def precision(self) -> float | None:
        """Share of the selected features that are relevant (None when the truth is unknown)."""
        return None if self.relevant is None else precision_recall(self.selected, self.relevant)[0]

    @property
    def recall(self) -> float | None:
        """Share of the relevant features that are selected (None when the truth is unknown)."""
        return None if self.relevant is None else precision_recall(self.selected, self.relevant)[1]

    def to_frame(self) -> pd.DataFrame:
        """One row per variable: importance, draws, wins over the probe, win rate, selected."""
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(self.n_sampled > 0, self.n_wins / self.n_sampled, np.nan)
        df = pd.DataFrame({"variable": list(self.variables), "importance": self.importances,
                           "n_sampled": self.n_sampled, "n_wins": self.n_wins,
                           "win_rate": rate, "selected": self.selected_mask})
        if self.relevant is not None:
            df["relevant"] = df["variable"].isin(self.relevant)
        return df

    def to_importance_result(self, problem: str | None = None) -> ImportanceResult:
        """The importances as an :class:`ImportanceResult` (no depth split)."""
        return ImportanceResult(variables=self.variables, importances=self.importances,
                                by_degree=None, method=self.method,
                                parameters=dict(self.parameters), problem=problem,
                                units="gini" if self.parameters.get("criterion") == "gini" else "bits")

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "SubspaceSelection":
        """The SubspaceSelection that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def subspace_selection(X, y, *, method: str = "srs", subspace_size: int = 50, alpha: float = 0.5,
                       max_features: int | None = None, n_estimators: int = 1000,
                       min_sampled: int = 5, beta: float = 0.95, probe: str | None = "permutation",
                       criterion: str = "entropy", random_state: int | None = 0,
                       variables: Iterable[str] | None = None, relevant=None, X_test=None,
                       y_test=None, checkpoints=None,
                       progress: Callable[[int, int], None] | None = None,
                       should_stop: Callable[[], bool] | None = None) -> SubspaceSelection:
    """Select all relevant features with Random Subspace or Sequential Random Subspace trees.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric inputs without missing values (a DataFrame gives the names).
    y : array-like of shape (n_samples,)
        Class labels.
    method : {"srs", "rs"}, default="srs"
        "rs" ignores ``alpha`` (it is SRS with alpha = 0).
    subspace_size : int, default=50
        q, the features each tree sees (plus the probe); at most p.
    alpha : float, default=0.5
        Share of the subspace reserved for features of F, in [0, 1].
    max_features : int or None, default=None
        K, the candidate columns per node; None means every column of the
        subspace, probe included (the slides' K = q).
    n_estimators : int, default=1000
        T, the number of trees (iterations), grown one after the other.
    min_sampled : int, default=5
        L of the probe rule.
    beta : float, default=0.95
        Fraction of trees, in (0, 1], in which a kept feature beats the probe.
    probe : {"permutation", "normal"} or None, default="permutation"
        The probe column: a permuted copy of one of the tree's q features (drawn
        at random; the test rows get their own permutation), or a fresh standard
        normal column.  None grows trees without a probe, and F is then the
        slides' idealised "all features that get non-zero importance".
    criterion : {"entropy", "gini"}, default="entropy"
    random_state : int or None, default=0
        Seeds the subspace and probe draws and, as ``ExtraTreesClassifier``
        does, each tree.
    variables : sequence of str, optional
        Names; default the DataFrame's columns or ``X1 .. Xp``.
    relevant : names, indices or boolean mask, optional
        The true relevant features; gives ``auprc``, ``precision`` and ``recall``.
    X_test, y_test : array-like, optional
        Held-out rows; gives ``accuracy``, the test accuracy of the averaged
        class probabilities of the trees grown so far, each on its own subspace.
    checkpoints : iterable of int, optional
        Tree counts at which ``curve`` gets a row; default every T/50 trees.
    progress : callable, optional
        ``progress(done, total)``, every T/100 trees and at the end.
    should_stop : callable, optional
        Called before each tree; when it returns True the run ends and the
        result covers the trees grown so far (``stopped=True``).

    Returns
    -------
    SubspaceSelection

    Notes
    -----
    SRS, step 2.1 of the slides: :math:`Q = R \\cup C` with ``R`` a random
    subset of :math:`\\min(\\lfloor \\alpha q \\rfloor, |F|)` features of F and
    ``C`` a random subset of :math:`q - |R|` features of :math:`V \\setminus R`.
    F is recomputed from the running counts after every tree, so a feature
    whose win rate falls below beta leaves it.

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> prob = get_problem("led:irrelevant=17")
    >>> df = prob.sample(300, random_state=0)
    >>> res = subspace_selection(df[list(prob.variables)], df["Y"], method="rs",
    ...                          subspace_size=24, max_features=1, n_estimators=100)
    >>> int(res.n_sampled.min())      # q = p: every feature is in every tree
    100
    """
    if variables is None and hasattr(X, "columns"):
        variables = [str(c) for c in X.columns]
    Xa, ya = _s.check_xy(X, y)
    n, p = Xa.shape
    names = tuple(variables) if variables is not None else tuple(f"X{j + 1}" for j in range(p))
    if len(names) != p:
        raise ValueError(f"variables has {len(names)} names but X has {p} columns.")
    opts = _s.check_options(p, method=method, subspace_size=subspace_size, alpha=alpha,
                            max_features=max_features, n_estimators=n_estimators,
                            min_sampled=min_sampled, beta=beta, probe=probe,
                            criterion=criterion, random_state=random_state)
    classes, y_codes = np.unique(ya, return_inverse=True)
    Xt = yt = None
    if (X_test is None) != (y_test is None):
        raise ValueError("Give both X_test and y_test, or neither.")
    if X_test is not None:
        Xt, yt_raw = _s.check_xy(X_test, y_test, "X_test")
        if Xt.shape[1] != p:
            raise ValueError(f"X_test has {Xt.shape[1]} columns but X has {p}.")
        pos = np.searchsorted(classes, yt_raw)
        pos = np.clip(pos, 0, classes.size - 1)
        yt = np.where(classes[pos] == yt_raw, pos, -1)   # unseen classes are never right
    truth = _s.relevant_mask(relevant, names)
    state = _s.run(Xa, y_codes, opts, X_test=Xt, y_test_codes=yt, truth=truth,
                   checkpoints=checkpoints, progress=progress, should_stop=should_stop)
    found = state.found(opts) if state.n_done else np.zeros(p, dtype=bool)
    params = opts.as_dict()
    params["n_samples"] = int(n)
    return SubspaceSelection(
        variables=names,
        importances=state.importance_sum / max(state.n_done, 1),
        n_sampled=state.n_sampled, n_wins=state.n_wins,
        selected=tuple(names[j] for j in np.flatnonzero(found)),
        method=opts.method, parameters=params, n_estimators=state.n_done,
        stopped=state.stopped, probe_importances=np.asarray(state.probe_importances),
        curve=pd.DataFrame(state.records),
        relevant=None if truth is None else tuple(names[j] for j in np.flatnonzero(truth)))


class SplitData(NamedTuple):
    """Training and test rows of one seed, with the names and the true relevant features.

    Attributes
    ----------
    X_train : ndarray of shape (n_train, n_features)
    y_train : ndarray of shape (n_train,)
    X_test : ndarray of shape (n_test, n_features)
    y_test : ndarray of shape (n_test,)
    variables : tuple of str
    relevant : tuple of str or None
        The truly relevant features, when known (a built-in problem).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    variables: tuple[str, ...]
    relevant: tuple[str, ...] | None = None


def madelon_split(irrelevant: int, random_state: int, *, n_train: int = 1000,
                  n_test: int = 500) -> SplitData:
    """Fresh Madelon-like rows: the first ``n_train`` train, the next ``n_test`` test.

    The rows :func:`madelon_curves` runs on (it calls this) for the same number of irrelevant features and seed: ``madelon:irrelevant=k``
    sampled with ``n_train + n_test`` rows (1,000 + 500 in the slides).

    Parameters
    ----------
    irrelevant : int
        k, the number of irrelevant features (p = 20 + k).
    random_state : int
    n_train, n_test : int, default=1000, 500

    Returns
    -------
    SplitData
        With the 20 relevant features as ``relevant``.
    """
    from varimp_core.problems.registry import get_problem

    problem = get_problem(f"madelon:irrelevant={int(irrelevant)}")
    df = problem.sample(n_train + n_test, random_state=random_state)
    X, y = df[list(problem.variables)].to_numpy(), df[problem.target].to_numpy()
    return SplitData(X[:n_train], y[:n_train], X[n_train:], y[n_train:],
                     tuple(problem.variables), problem.relevant)


def madelon_curves(irrelevant: Iterable[int] = MADELON_IRRELEVANT, *, seeds: Iterable[int] = range(5),
                   methods: Iterable[str] = ("rs", "srs"), n_estimators: int = 1000,
                   subspace_size: int = 50, alpha: float = 0.5, max_features: int | None = None,
                   min_sampled: int = 5, beta: float = 0.95, n_train: int = 1000,
                   n_test: int = 500, checkpoints=None,
                   progress: Callable[[int, int], None] | None = None,
                   should_stop: Callable[[], bool] | None = None) -> pd.DataFrame:
    """The slides' Madelon experiment: AUPRC and test accuracy against the number of trees.

    For each number of irrelevant features and each seed, ``madelon:irrelevant=k``
    is sampled with ``n_train + n_test`` rows (1000 + 500 in the slides), the
    first ``n_train`` rows train and the others test
    (:func:`madelon_split`); every method then runs on
    the same split (paired comparison).  The 20 relevant features are the positives
    of the AUPRC of the importance ranking.

    Parameters
    ----------
    irrelevant : iterable of int, default=(480, 1480, 2980, 5480)
    seeds : iterable of int, default=range(5)
        Each seed draws the data and seeds the runs (the slides average 50 splits).
    methods : iterable of {"rs", "srs"}, default=("rs", "srs")
    n_estimators, subspace_size, alpha, max_features, min_sampled, beta
        As in :func:`subspace_selection` (slides: q = 50, K = q, L = 5, beta = 0.95).
    n_train, n_test : int, default=1000, 500
    checkpoints : iterable of int, optional
    progress : callable, optional
        ``progress(done, total)`` counted in trees over all runs.
    should_stop : callable, optional
        Ends the study between trees; the frame then holds the runs so far.

    Returns
    -------
    curves : pandas.DataFrame
        Tidy, one row per (method, p, seed, n_trees) with columns ``method``,
        ``p``, ``seed``, ``n_trees``, ``auprc``, ``accuracy``, ``n_selected``,
        ``precision``, ``recall``.  Average over seeds with
        ``curves.groupby(["method", "p", "n_trees"]).mean(numeric_only=True)``.
    """

    irrelevant, seeds, methods = list(irrelevant), list(seeds), list(methods)
    for m in methods:
        if m not in _s.METHODS:
            raise ValueError(f"methods contains {m!r}: use 'rs' and/or 'srs'.")
    for name, v in (("n_train", n_train), ("n_test", n_test)):
        if not _s._is_int(v) or v < 2:
            raise ValueError(f"{name}={v!r} is not allowed: use an integer >= 2.")
    total = len(irrelevant) * len(seeds) * len(methods) * int(n_estimators)
    frames, done = [], 0
    for k in irrelevant:
        for seed in seeds:
            data = madelon_split(k, seed, n_train=n_train, n_test=n_test)
            for m in methods:
                base = done
                res = subspace_selection(
                    data.X_train, data.y_train, method=m, subspace_size=subspace_size,
                    alpha=alpha, max_features=max_features, n_estimators=n_estimators,
                    min_sampled=min_sampled, beta=beta, random_state=seed,
                    variables=data.variables, relevant=data.relevant, X_test=data.X_test,
                    y_test=data.y_test, checkpoints=checkpoints,
                    progress=None if progress is None else (lambda d, t, b=base: progress(b + d, total)),
                    should_stop=should_stop)
                done += res.n_estimators
                frames.append(res.curve.assign(method=m, p=len(data.variables), seed=seed))
                if res.stopped:
                    return tidy_runs(frames)
    return tidy_runs(frames)


def curve_statistics(curves: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation (ddof=1; 0 for one seed) and number of seeds of each curve.

    Parameters
    ----------
    curves : DataFrame
        :func:`madelon_curves`' columns ``method``, ``p``, ``seed``, ``n_trees``,
        ``auprc`` and ``accuracy``.

    Returns
    -------
    DataFrame
        One row per ``metric`` ("auprc", "accuracy"), ``method``, ``p`` and ``n_trees``:
        ``mean``, ``std`` and ``count`` over the seeds; a metric with no value is left out.
    """
    missing = {"method", "p", "seed", "n_trees", "auprc", "accuracy"} - set(curves.columns)
    if missing:
        raise ValueError(f"The curves lack the columns {', '.join(sorted(missing))}.")
    frames = []
    for metric in ("auprc", "accuracy"):
        d = curves.dropna(subset=[metric])
        if len(d):
            out = d.groupby(["method", "p", "n_trees"])[metric].agg(
                ["mean", "std", "count"]).reset_index()
            frames.append(out.assign(metric=metric, std=out["std"].fillna(0.0)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["method", "p", "n_trees", "mean", "std", "count", "metric"])


def tidy_runs(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The curves of several runs as one tidy frame, in the study's columns.

    Parameters
    ----------
    frames : iterable of pandas.DataFrame
        One run's ``curve`` each (:attr:`SubspaceSelection.curve`), with the
        run's ``method``, ``p`` and ``seed`` as columns.

    Returns
    -------
    curves : pandas.DataFrame
        The frames one after the other (a fresh index), in the columns
        ``method``, ``p``, ``seed``, ``n_trees``, ``auprc``, ``accuracy``,
        ``n_selected``, ``precision``, ``recall``: empty without frames, NaN
        where a frame lacks a column (a run stopped before its first tree).
    """
    frames = list(frames)
    if not frames:
        return pd.DataFrame(columns=list(_CURVE_COLUMNS))
    return pd.concat(frames, ignore_index=True).reindex(columns=list(_CURVE_COLUMNS))
