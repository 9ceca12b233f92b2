"""Li et al. (2019), section 4: which measure tells noisy from relevant features?

Two studies, both seeded, with ``progress(done, total)`` and a ``should_stop()``
callable checked between repetitions (a cancelled study returns what it has):

* :func:`noisy_feature_auc` -- the "noisy feature identification" experiment:
  on ``strobl`` (classification and regression) and ``madelon``, label the
  relevant inputs 1 and the noisy ones 0, score each importance measure by its
  ROC AUC, repeat over seeds, for shallow (``min_samples_leaf=100``) and deep
  (``min_samples_leaf=1``) forests of 100 trees with ``max_features=10``
  (Table 1 of the paper).
* :func:`mdi_bias_curves` -- MDI and MDI-oob of the five-feature simulation of
  the section's first paragraph as ``min_samples_leaf`` (1..50) and
  ``max_depth`` (1..20) vary (Figs 1-3).

Both studies are made of independent runs (a seed, a depth setting, a point of
a curve): :func:`combine_runs` makes one study of runs made separately (cached
one by one, or stopped early), and :func:`paper_auc` reads Table 1 of the paper
beside each AUC.

References
----------
.. [1] X. Li, Y. Wang, S. Basu, K. Kumbier and B. Yu, "A debiased MDI feature
   importance measure for random forests", NeurIPS 2019.
.. [2] C. Strobl, A.-L. Boulesteix, A. Zeileis and T. Hothorn, "Bias in random
   forest variable importance measures", BMC Bioinformatics 8, 2007.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from varimp_core.measures import inputs as chk
from varimp_core.measures.suite import DEFAULT_MEASURES, MEASURES, compute_measures
from varimp_core.problems.registry import canonical_spec, get_problem, parse_spec
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["PROTOCOL_PROBLEMS", "DEPTH_SETTINGS", "LI2019_TABLE1", "StudyResult",
           "noisy_feature_auc", "li_five_feature_sample", "mdi_bias_curves", "bias_curve_summary",
           "summarise", "combine_runs", "paper_auc"]

#: Problem specs of :func:`noisy_feature_auc` (strobl as in Li et al. sec. 4; madelon added).
PROTOCOL_PROBLEMS = ("strobl:task=classification", "strobl:task=regression", "madelon")
#: ``min_samples_leaf`` of the two depth settings of Li et al., Table 1.
DEPTH_SETTINGS = {"shallow": 100, "deep": 1}

#: Average AUC on the simulated data in Li et al. (2019), Table 1, keyed by
#: (task, depth setting) then measure (40 repetitions).  Read from the paper's
#: text, whose extracted table lost its column headers: the columns are told
#: apart by MDI's cardinality bias (0.12 / 0.09 for deep trees only on the
#: simulated data) and by the regression setting's low signal (AUC ~ 0.5).
LI2019_TABLE1 = {
    ("classification", "shallow"): {"mdi_oob": 0.75, "naive_oob": 0.60, "ranger": 0.55,
                                    "mda_holdout": 0.50, "mdi": 0.63},
    ("regression", "shallow"): {"mdi_oob": 0.58, "naive_oob": 0.39, "ranger": 0.49,
                                "mda_holdout": 0.58, "mdi": 0.40},
    ("classification", "deep"): {"mdi_oob": 0.76, "naive_oob": 0.18, "ranger": 0.56,
                                 "mda_holdout": 0.49, "mdi": 0.12},
    ("regression", "deep"): {"mdi_oob": 0.52, "naive_oob": 0.10, "ranger": 0.50,
                             "mda_holdout": 0.51, "mdi": 0.09},
}


@dataclass(frozen=True)
class StudyResult:
    """Outcome of a repeated study.

    Parameters
    ----------
    scores : pandas.DataFrame
        Tidy: one row per repetition and measured quantity.
    summary : pandas.DataFrame
        Mean, standard deviation, count and standard error over seeds.
    cancelled : bool
        True when ``should_stop()`` ended the study early; ``scores`` then holds
        the repetitions finished before.
    units : dict of str to str
        Units of the values of each measure (``{"mdi": "gini", ...}``, from the
        core's results) where the scores are importances; empty for AUCs,
        which have none.
    """

    scores: pd.DataFrame
    summary: pd.DataFrame
    cancelled: bool = False
    units: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "StudyResult":
        """The StudyResult that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def summarise(scores: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """Mean, std, count and standard error of ``value`` per group of ``keys``."""
    if scores.empty:
        return pd.DataFrame(columns=[*keys, "mean", "std", "n", "sem"])
    g = scores.groupby(keys, sort=False)[value]
    out = g.agg(mean="mean", std="std", n="count").reset_index()
    out["sem"] = out["std"] / np.sqrt(out["n"])
    return out


def _check_grid(name, values) -> list:
    """A list of the values of an iterable option; a lone value gets a sentence, not a TypeError."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name}={values!r} is not allowed: give a list of values, e.g. "
                         f"[{values!r}].")
    return list(values)


def _check_seeds(seeds) -> list[int]:
    seeds = _check_grid("seeds", seeds)
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed.")
    return [chk.check_int("seed", s, low=0) for s in seeds]


def _check_callable(name, f):
    if f is not None and not callable(f):
        raise ValueError(f"{name} must be a callable or None, got {type(f).__name__}.")


def _run_steps(steps, total, progress, should_stop) -> tuple[list, bool]:
    """Call each step (it returns rows) until done or ``should_stop()``; ``progress`` after each."""
    rows, done = [], 0
    for step in steps:
        if should_stop is not None and should_stop():
            return rows, True
        rows.extend(step())
        done += 1
        if progress is not None:
            progress(done, total)
    return rows, False


def _seeded_problem(spec: str, seed: int):
    """The problem of repetition ``seed`` (strobl draws its relevant set from the seed)."""
    name, options = parse_spec(spec)
    if "seed" in options:
        options = {**options, "seed": seed}
    return get_problem(canonical_spec(name, options))


def noisy_feature_auc(*, problems=PROTOCOL_PROBLEMS, depth_settings=("shallow", "deep"),
                      measures=DEFAULT_MEASURES, seeds=range(10), n_estimators=100, max_features=10,
                      n_samples=None, kind="rf", test_size=0.3, progress=None,
                      should_stop=None) -> StudyResult:
    """AUC of each measure at separating relevant from noisy features (Li et al. 2019, Table 1).

    Parameters
    ----------
    problems : sequence of str, default=PROTOCOL_PROBLEMS
        Problem specs with known relevant inputs (:attr:`Problem.relevant`).
        A ``seed`` option (strobl) is set to each repetition's seed, so the 5
        relevant features are redrawn among the first ten every time.
    depth_settings : sequence of {"shallow", "deep"}, default=("shallow", "deep")
        ``min_samples_leaf`` 100 or 1 (:data:`DEPTH_SETTINGS`).
    measures : sequence of str, default=DEFAULT_MEASURES
    seeds : iterable of int, default=range(10)
        One repetition per seed (the paper uses 40): it seeds the sample, the
        forest and the permutations.
    n_estimators : int, default=100
    max_features : int, default=10
        "mtry" of the paper.
    n_samples : int or None, default=None
        Rows per sample; None uses the problem's default (1000 for strobl).
    kind : {"rf", "et"}, default="rf"
    test_size : float, default=0.3
        Held-out share for ``mda_holdout``.
    progress : callable, optional
        ``progress(done, total)`` after each repetition.
    should_stop : callable, optional
        Checked before each repetition; when it returns True the study stops.

    Returns
    -------
    result : StudyResult
        ``scores`` columns: ``problem``, ``task``, ``depth_setting``,
        ``min_samples_leaf``, ``measure``, ``seed``, ``auc``; ``summary``
        groups by (problem, task, depth_setting, measure).

    Notes
    -----
    With importances :math:`s_k` and labels :math:`r_k \\in \\{0, 1\\}`
    (relevant), the AUC is the probability that a random relevant feature
    scores above a random noisy one (ties count 1/2),
    :func:`sklearn.metrics.roc_auc_score`.  An AUC below 0.5 means the
    measure prefers noisy features, as MDI does on strobl with deep trees.
    """
    problems = [problems] if isinstance(problems, str) else list(problems)
    depth_settings = [depth_settings] if isinstance(depth_settings, str) else list(depth_settings)
    for d in depth_settings:
        if d not in DEPTH_SETTINGS:
            raise ValueError(f"depth setting {d!r} is not allowed: use 'shallow' or 'deep'.")
    measures = [measures] if isinstance(measures, str) else list(measures)
    for m in measures:
        if m not in MEASURES:
            raise ValueError(f"Unknown measure {m!r}; choose among: {', '.join(MEASURES)}.")
    seeds = _check_seeds(seeds)
    _check_callable("progress", progress)
    _check_callable("should_stop", should_stop)
    for spec in problems:
        if get_problem(spec).relevant is None:
            raise ValueError(f"Problem {spec!r} has no known relevant features, so no AUC; "
                             "use strobl, madelon or another synthetic problem.")
    steps = (partial(_one_auc_run, spec, depth, seed, measures, n_estimators=n_estimators,
                     max_features=max_features, n_samples=n_samples, kind=kind,
                     test_size=test_size)
             for spec in problems for depth in depth_settings for seed in seeds)
    total = len(problems) * len(depth_settings) * len(seeds)
    rows, cancelled = _run_steps(steps, total, progress, should_stop)
    scores = pd.DataFrame(rows, columns=["problem", "task", "depth_setting", "min_samples_leaf",
                                         "measure", "seed", "auc"])
    summary = summarise(scores, ["problem", "task", "depth_setting", "measure"], "auc")
    return StudyResult(scores=scores, summary=summary, cancelled=cancelled)


def _one_auc_run(spec, depth, seed, measures, *, n_estimators, max_features, n_samples, kind,
                 test_size):
    problem = _seeded_problem(spec, seed)
    frame = problem.sample(n_samples, random_state=seed)
    X, y = frame[list(problem.variables)], frame[problem.target].to_numpy()
    labels = np.isin(problem.variables, problem.relevant).astype(int)
    leaf = DEPTH_SETTINGS[depth]
    results = compute_measures(X, y, kind=kind, task=problem.task, measures=measures,
                               n_estimators=n_estimators, max_features=max_features,
                               min_samples_leaf=leaf, random_state=seed, test_size=test_size,
                               problem=problem.spec)
    return [(problem.name, problem.task, depth, leaf, m, seed,
             float(roc_auc_score(labels, r.importances))) for m, r in results.items()]


def li_five_feature_sample(n_samples=200, random_state=0) -> pd.DataFrame:
    """The simulation of Li et al. (2019), section 4, first paragraph (after Strobl et al. 2007).

    Parameters
    ----------
    n_samples : int, default=200
    random_state : int or None, default=0
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    frame : pandas.DataFrame
        Columns ``X1`` ~ N(0, 1), ``X2`` ~ Bernoulli(0.5), ``X3``, ``X4``, ``X5``
        uniform on 4, 10 and 20 categories (0, 1, ...), and ``Y`` ~
        Bernoulli((1 + X2) / 3).  Only X2 is relevant.
    """
    n = chk.check_int("n_samples", n_samples, low=2)
    rng = np.random.default_rng(chk.check_int("random_state", random_state, low=0, allow_none=True))
    x2 = rng.integers(0, 2, n)
    frame = pd.DataFrame({"X1": rng.normal(size=n), "X2": x2, "X3": rng.integers(0, 4, n),
                          "X4": rng.integers(0, 10, n), "X5": rng.integers(0, 20, n)})
    frame["Y"] = (rng.random(n) < (1 + x2) / 3).astype(np.int64)   # P(Y=1) = (1 + x2) / 3
    return frame


def mdi_bias_curves(*, min_samples_leaf=range(1, 51), max_depth=range(1, 21), n_samples=200,
                    n_estimators=300, max_features=2, measures=("mdi", "mdi_oob"), seeds=(0,),
                    progress=None, should_stop=None) -> StudyResult:
    """MDI and MDI-oob of every feature as the trees grow deeper (Li et al. 2019, Figs 1-3).

    Parameters
    ----------
    min_samples_leaf : iterable of int, default=range(1, 51)
        Grid of the first curve (fully grown otherwise), Fig. 1 and Fig. 3.
    max_depth : iterable of int, default=range(1, 21)
        Grid of the second curve (``min_samples_leaf=1``), Fig. 2.
    n_samples : int, default=200
    n_estimators : int, default=300
    max_features : int, default=2
        scikit-learn's default then, :math:`\\lfloor\\sqrt{5}\\rfloor`.
    measures : sequence of str, default=("mdi", "mdi_oob")
        Unnormalised MDI (Gini) and MDI-oob.
    seeds : iterable of int, default=(0,)
        One data set per seed (:func:`li_five_feature_sample`), the forest seeded alike.
    progress, should_stop : callable, optional
        As in :func:`noisy_feature_auc`; one step per forest.

    Returns
    -------
    result : StudyResult
        ``scores`` columns: ``parameter`` (``"min_samples_leaf"`` or
        ``"max_depth"``), ``value``, ``measure``, ``variable``, ``relevant``,
        ``seed``, ``importance``; ``summary`` averages over seeds; ``units``
        names each measure's units (``"gini"`` for both default measures).

    Notes
    -----
    Theorem 1 of the paper bounds the expected MDI of noisy features by
    :math:`C\\, d_n \\log(np) / m_n` (depth :math:`d_n`, minimum leaf size
    :math:`m_n`): it falls as leaves grow and rises with depth, while MDI-oob
    stays near 0 for the noisy X1, X3, X4, X5.
    """
    grids = [("min_samples_leaf", [chk.check_int("min_samples_leaf", v, low=1)
                                   for v in _check_grid("min_samples_leaf", min_samples_leaf)]),
             ("max_depth", [chk.check_int("max_depth", v, low=1)
                            for v in _check_grid("max_depth", max_depth)])]
    seeds = _check_seeds(seeds)
    _check_callable("progress", progress)
    _check_callable("should_stop", should_stop)
    total = len(seeds) * sum(len(g) for _, g in grids)
    units: dict[str, str] = {}   # of each measure, as its results name them

    def one_curve_point(X, y, seed, parameter, value):
        tree_options = {"min_samples_leaf": value if parameter == "min_samples_leaf" else 1,
                        "max_depth": value if parameter == "max_depth" else None}
        results = compute_measures(X, y, measures=measures, n_estimators=n_estimators,
                                   max_features=max_features, random_state=seed,
                                   problem="li2019-five-features", **tree_options)
        units.update({m: r.units for m, r in results.items()})
        return [(parameter, value, m, v, v == "X2", seed, float(imp))
                for m, r in results.items() for v, imp in zip(r.variables, r.importances)]

    def steps():
        for seed in seeds:
            frame = li_five_feature_sample(n_samples, random_state=seed)
            X, y = frame[["X1", "X2", "X3", "X4", "X5"]], frame["Y"].to_numpy()
            for parameter, grid in grids:
                for value in grid:
                    yield partial(one_curve_point, X, y, seed, parameter, value)

    rows, cancelled = _run_steps(steps(), total, progress, should_stop)
    scores = pd.DataFrame(rows, columns=["parameter", "value", "measure", "variable", "relevant",
                                         "seed", "importance"])
    summary = summarise(scores, ["parameter", "value", "measure", "variable"], "importance")
    return StudyResult(scores=scores, summary=summary, cancelled=cancelled, units=units)


def bias_curve_summary(curves) -> pd.DataFrame:
    """Mean importance over seeds of :func:`mdi_bias_curves` output, for plotting.

    Parameters
    ----------
    curves : StudyResult or DataFrame
        The result of :func:`mdi_bias_curves`, its per-seed ``scores``
        (columns ``parameter``, ``value``, ``measure``, ``variable``, ``seed``,
        ``importance``) or its ``summary`` (returned as it is).

    Returns
    -------
    summary : DataFrame
        ``parameter``, ``value``, ``measure``, ``variable``, ``mean``, ``std``,
        ``n`` and ``sem`` (std / sqrt(n)).
    """
    if isinstance(curves, StudyResult):
        return curves.summary
    if not isinstance(curves, pd.DataFrame):
        raise ValueError("curves must be a StudyResult or a DataFrame from mdi_bias_curves.")
    keys = ["parameter", "value", "measure", "variable"]
    if "mean" in curves.columns:
        return curves
    missing = [c for c in (*keys, "importance") if c not in curves.columns]
    if missing:
        raise ValueError(f"The table has no column {missing[0]!r}; pass the scores of "
                         "mdi_bias_curves.")
    return summarise(curves, keys, "importance")


def combine_runs(runs: Sequence[StudyResult], *, cancelled: bool = False) -> StudyResult:
    """One study of runs of :func:`noisy_feature_auc` or :func:`mdi_bias_curves` made apart.

    A caller that caches each run (a seed and depth setting, a point of a
    curve) or stops between runs makes the whole study from the runs it has.

    Parameters
    ----------
    runs : sequence of StudyResult
        Runs of the same study (same options but the seeds, depth settings or
        grid values), at least one.
    cancelled : bool, default=False
        Whether some runs of the study are missing.

    Returns
    -------
    result : StudyResult
        The runs' ``scores`` one after another -- for AUCs, ordered by problem,
        depth setting (:data:`DEPTH_SETTINGS` order) and seed, as
        :func:`noisy_feature_auc` writes them --, the ``summary`` of them all
        (the same mean over seeds as one call with every seed) and the runs'
        ``units``.
    """
    runs = list(runs)
    if not runs or not all(isinstance(r, StudyResult) for r in runs):
        raise ValueError("runs must be a non-empty sequence of StudyResult.")
    scores = pd.concat([r.scores for r in runs], ignore_index=True)
    units = {m: u for r in runs for m, u in r.units.items()}
    if "auc" not in scores.columns:
        return StudyResult(scores, bias_curve_summary(scores), cancelled, units)
    order = np.lexsort((scores["seed"].to_numpy(),
                        scores["depth_setting"].map(list(DEPTH_SETTINGS).index).to_numpy(),
                        scores.groupby(["problem", "task"], sort=False).ngroup().to_numpy()))
    scores = scores.iloc[order].reset_index(drop=True)
    summary = summarise(scores, ["problem", "task", "depth_setting", "measure"], "auc")
    return StudyResult(scores, summary, cancelled, units)


def paper_auc(frame: pd.DataFrame) -> np.ndarray:
    """The AUC that Li et al. (2019), Table 1, report for each row of ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The ``scores`` or ``summary`` of :func:`noisy_feature_auc` (columns
        ``problem``, ``task``, ``depth_setting``, ``measure``).

    Returns
    -------
    values : ndarray of shape (n_rows,)
        :data:`LI2019_TABLE1`'s value, NaN where the paper has none: a problem
        other than ``strobl`` (their simulated data) or a measure they do not
        report (``mda_oob``).
    """
    missing = [c for c in ("problem", "task", "depth_setting", "measure")
               if c not in getattr(frame, "columns", ())]
    if missing:
        raise ValueError(f"The table has no column {missing[0]!r}; pass the scores or the "
                         "summary of noisy_feature_auc.")
    return np.array([LI2019_TABLE1.get((t, d), {}).get(m, np.nan) if p == "strobl" else np.nan
                     for p, t, d, m in zip(frame["problem"], frame["task"],
                                           frame["depth_setting"], frame["measure"])],
                    dtype=float)
