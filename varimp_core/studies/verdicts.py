"""One verdict per variable on a sample: relevant, not distinguishable from chance, or undecided.

On a sample the plug-in importances of every method are biased upwards
(irrelevant inputs get positive importance, many-level inputs more), so a
bar alone says nothing about relevance.  :func:`importance_verdicts` states
one procedure (``docs/verdicts.md``):

1. **Null.**  Y permuted R times (seeded), the *same* method and settings
   regrown on each copy (:func:`~varimp_core.studies.nulls.permutation_null`).
2. **Debiased value.**  ``above_chance`` = observed - mean of the variable's
   null, in the importance's units: an irrelevant variable centres on zero.
   The plug-in value stays in ``importances``, biased on samples.
3. **Multiple testing.**  Westfall & Young's (1993) step-down maxT on the
   statistics :math:`t_j = (\\mathrm{obs}_j - \\bar m_j)/s_j`, with
   :math:`\\bar m_j, s_j` the mean and standard deviation of the R + 1 values
   (observed and null) of variable j, so the R + 1 rows stay exchangeable under
   the complete null; adjusted p-values
   :math:`\\tilde p_{(i)} = (1 + \\#\\{r: \\max_{k \\ge i} t^{(r)}_{(k)} \\ge t_{(i)}\\})/(R+1)`,
   made monotone along the steps.  This controls the family-wise error rate.
4. **Verdict.**  ``"relevant"`` iff :math:`\\tilde p_j \\le \\alpha`; else
   ``"undecided"`` when the test cannot decide on these rows (R + 1 < 1/alpha,
   or fewer than :data:`MIN_CELL_ROWS` rows per (level x class) cell on average,
   Cochran's rule, one class for a numeric target), else ``"chance"``.
5. **Leaks.**  The columns :func:`~varimp_core.data.leaks.find_leaks` flags are tested
   first with every input; when all are relevant they are set aside and the other inputs
   tested again without them (a leak takes nearly all of Y's impurity and masks the
   others).  Testing the second family only when the first is wholly rejected (serial
   gatekeeping) keeps the family-wise error rate at alpha.

An exact distribution (a built-in problem without ``n_samples``) is a
population: no test, the verdict is ``"relevant"`` iff the method's value
exceeds :data:`EXACT_TOLERANCE`, never undecided.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from varimp_core.api import METHODS, compute_importances, default_method
from varimp_core.data.leaks import find_leaks
from varimp_core.data.prepare import PreparedData
from varimp_core.data.table import DiscreteTable
from varimp_core.studies.montecarlo_jobs import as_prepared
from varimp_core.studies.nulls import permutation_null
from varimp_core.studies.replicates import check_int
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["VERDICTS", "MIN_CELL_ROWS", "EXACT_TOLERANCE", "PROCEDURE_NAME", "VerdictResult",
           "importance_verdicts", "maxt_adjusted", "sparse_variables", "verdict_size",
           "VERDICT_WORK", "MIN_TEST_TREES"]

#: Methods without trees to sample (``test_estimators`` does not apply).
EXACT_METHODS = ("exact", "exact-rf", "exact-et")
#: The three verdicts.
VERDICTS = ("relevant", "chance", "undecided")
#: Cochran's rule: fewer rows than this per (level x class) cell on average is too sparse.
MIN_CELL_ROWS = 5
#: An exact value above this is relevant (population: no sampling error).
EXACT_TOLERANCE = 1e-12
PROCEDURE_NAME = "permutation maxT (Westfall-Young)"
#: (R + 1) x trees x rows of the test's forests that :func:`verdict_size` aims under.
VERDICT_WORK = 20_000_000
#: Fewest trees per forest of the test that :func:`verdict_size` lowers trees to.
MIN_TEST_TREES = 25
EXACT_PROCEDURE_NAME = "exact value (population)"
STATISTIC = ("t_j = (obs_j - mean_j) / sd_j, mean and sd over the observed and the R "
             "label-permutation values of variable j")
LEAK_STEP = ("leaks (find_leaks) are tested first with every input; when all are relevant "
             "they are set aside and the other inputs tested again without them (serial "
             "gatekeeping, each family at the full level)")


def maxt_adjusted(observed, null) -> tuple[np.ndarray, np.ndarray]:
    """Westfall-Young step-down maxT adjusted p-values, and the observed statistics.

    Parameters
    ----------
    observed : array-like of shape (p,)
    null : array-like of shape (R, p)
        The same statistic on R label permutations.

    Returns
    -------
    p_adjusted, t : ndarrays of shape (p,)
        Each variable's values (observed and null) are standardised by the mean and
        standard deviation of its R + 1 values (a constant variable gets t = 0); with
        the variables sorted by decreasing observed t, step i's p-value is
        :math:`(1 + \\#\\{r: \\max_{k \\ge i} t^{(r)}_{(k)} \\ge t_{(i)}\\})/(R + 1)`,
        and the adjusted p-value the running maximum of these along the steps.

    Examples
    --------
    One clear signal among three: its p-value is the smallest possible, 1/(R + 1).

    >>> import numpy as np
    >>> null = np.random.default_rng(0).normal(size=(19, 3))
    >>> p, t = maxt_adjusted([5.0, 0.0, 0.1], null)
    >>> float(p[0]), bool(p[1] > 0.5 and p[2] > 0.5)
    (0.05, True)
    """
    obs = np.asarray(observed, dtype=float)
    null = np.asarray(null, dtype=float).reshape(-1, obs.size)
    R = null.shape[0]
    if R == 0:
        return np.full(obs.size, np.nan), np.full(obs.size, np.nan)
    every = np.vstack([obs[None, :], null])
    mean = every.mean(axis=0)
    sd = every.std(axis=0, ddof=1)
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    T = (every - mean) / sd
    T[:, np.abs(every - mean).max(axis=0) == 0] = 0.0     # constant: t = 0 exactly
    t_obs, t_null = T[0], T[1:]
    order = np.argsort(-t_obs, kind="stable")
    # u[r, i] = max over the variables from step i on (the step-down set) in permutation r
    u = np.maximum.accumulate(t_null[:, order][:, ::-1], axis=1)[:, ::-1]
    p_step = (1 + (u >= t_obs[order][None, :]).sum(axis=0)) / (R + 1)
    p_step = np.maximum.accumulate(p_step)
    p = np.empty(obs.size)
    p[order] = p_step
    return p, t_obs


def verdict_size(n_permutations: int, n_estimators: int, n_rows: int, *,
                 work: int = VERDICT_WORK, min_permutations: int = 19,
                 min_trees: int = MIN_TEST_TREES) -> tuple[int, int]:
    """R and the trees per forest of a forest's verdict test, on a budget of work.

    The test grows R + 1 forests (the observed and R permuted), each costing about
    trees x rows.  The trees are lowered first, to at most
    ``work / ((R + 1) x rows)`` but not below ``min_trees`` (nor above
    ``n_estimators``); then R, to ``work / (trees x rows) - 1`` but never below
    ``min_permutations`` (R + 1 >= 1/alpha, else nothing can be "relevant").
    Fewer trees per forest add Monte Carlo noise to the observed and permuted values
    alike, so the test stays exact; it loses a little power.  An MDI's expectation
    does not depend on the number of trees, so the chance level is unchanged.

    Parameters
    ----------
    n_permutations : int
        R requested.
    n_estimators : int
        Trees of the method's own forest.
    n_rows : int
        Rows of the sample.
    work : int, default=VERDICT_WORK
    min_permutations, min_trees : int

    Returns
    -------
    (R, trees) : tuple of int

    Examples
    --------
    >>> verdict_size(19, 100, 1_000)            # small: as requested
    (19, 100)
    >>> verdict_size(19, 2_000, 20_000)         # 20 x 50 x 20,000 = 2e7
    (19, 50)
    >>> verdict_size(99, 500, 100_000)          # trees at their floor, then R lowered
    (19, 25)
    """
    rows = max(int(n_rows), 1)
    R = max(int(n_permutations), min_permutations)
    trees = min(int(n_estimators), max(min_trees, work // ((R + 1) * rows)))
    trees = max(trees, 1)
    if (R + 1) * trees * rows > work:
        R = max(min_permutations, min(R, work // (trees * rows) - 1))
    return R, trees


def sparse_variables(data) -> tuple[np.ndarray, np.ndarray]:
    """Rows per (level x class) cell of each input, and whether it is below :data:`MIN_CELL_ROWS`.

    Levels and classes are those present in the prepared table (numeric inputs in their
    quantile bins); a numeric target counts as one class.
    """
    d = as_prepared(data)
    t = d.table
    keep = t.weight > 0
    N = float(t.weight[keep].sum())
    classes = 1 if d.task == "regression" else max(len(np.unique(t.y[keep])), 1)
    levels = np.array([max(len(np.unique(t.X[keep, j])), 1) for j in range(t.n_features)])
    per_cell = N / (levels * classes)
    return per_cell, per_cell < MIN_CELL_ROWS


@dataclass(frozen=True)
class VerdictResult:
    """One verdict per variable, with the numbers it rests on.

    Parameters
    ----------
    variables : tuple of str
    importances : ndarray of shape (p,)
        The method's plug-in importances (biased upwards on a sample).
    null_mean, null_sd : ndarray of shape (p,)
        Mean and standard deviation (ddof=1) of each variable's permutation null
        (zeros for an exact distribution).
    statistics : ndarray of shape (p,)
        The standardised statistics t_j of the maxT test (NaN for an exact distribution).
    p_adjusted : ndarray of shape (p,)
        Westfall-Young step-down maxT adjusted p-values (NaN for an exact distribution).
    verdicts : tuple of str
        ``"relevant"``, ``"chance"`` or ``"undecided"`` per variable.
    reasons : tuple of str
        Why each verdict, one short phrase.
    procedure : dict
        ``name``, ``level`` (alpha), ``n_permutations`` (R), ``statistic``,
        ``undecided`` (the rule) and ``method``.
    warnings : tuple of dict
        Leaks (:func:`varimp_core.data.leaks.find_leaks`).
    method : str
    parameters : dict
    exact : bool
        True for an exact distribution (no test).
    n_samples : int or None
    units : str
    set_aside : tuple of str
        Leak columns set aside: the other inputs' numbers (importance, null, p-value) are
        those of the same method on the table without them.
    cancelled : bool
    elapsed : float
    """

    variables: tuple[str, ...]
    importances: np.ndarray
    null_mean: np.ndarray
    null_sd: np.ndarray
    statistics: np.ndarray
    p_adjusted: np.ndarray
    verdicts: tuple[str, ...]
    reasons: tuple[str, ...]
    procedure: dict = field(default_factory=dict)
    warnings: tuple = ()
    method: str = ""
    parameters: dict = field(default_factory=dict)
    exact: bool = False
    n_samples: int | None = None
    units: str = "bits"
    set_aside: tuple[str, ...] = ()
    cancelled: bool = False
    elapsed: float = 0.0

    @property
    def above_chance(self) -> np.ndarray:
        """Importance above chance: observed minus the mean of the variable's null."""
        return self.importances - self.null_mean

    def verdict_map(self) -> dict[str, str]:
        """``{variable: verdict}``."""
        return dict(zip(self.variables, self.verdicts))

    def names(self, verdict: str) -> list[str]:
        """The variables with this verdict."""
        return [v for v, x in zip(self.variables, self.verdicts) if x == verdict]

    def to_frame(self) -> pd.DataFrame:
        """One row per variable: ``variable``, ``importance`` (plug-in), ``null_mean``,
        ``above_chance``, ``p_adjusted``, ``verdict``, ``reason``."""
        return pd.DataFrame({"variable": list(self.variables), "importance": self.importances,
                             "null_mean": self.null_mean, "above_chance": self.above_chance,
                             "p_adjusted": self.p_adjusted, "verdict": list(self.verdicts),
                             "reason": list(self.reasons)})

    def to_dict(self) -> dict:
        """Plain JSON types (:mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "VerdictResult":
        """The VerdictResult that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _undecided_rule(alpha: float) -> str:
    return (f"not relevant, and R + 1 < 1/alpha (no p-value can reach {alpha:g}) or fewer "
            f"than {MIN_CELL_ROWS} rows per (level x class) cell on average (Cochran; one "
            "class for a numeric target)")


def importance_verdicts(data, *, method: str | None = None, max_features: int = 1,
                        max_depth: int | None = None, n_estimators: int = 100,
                        bootstrap: bool | None = None, k_semantics: str = "id3",
                        criterion: str = "entropy", min_samples_leaf: int = 1,
                        n_permutations: int = 99, alpha: float = 0.05,
                        random_state: int = 0, n_jobs: int = 1, leaks: bool = True,
                        test_estimators: int | None = None,
                        progress=None, should_stop=None) -> VerdictResult:
    """One verdict per variable: ``"relevant"``, ``"chance"`` or ``"undecided"``.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
        A sample (an upload or a drawn problem), or an exact distribution.
    method, max_features, max_depth, n_estimators, bootstrap, k_semantics, criterion
        As in :func:`varimp_core.api.compute_importances` (method: its default).
    min_samples_leaf : int, default=1
        scikit-learn forests only.
    n_permutations : int, default=99
        R, the label permutations (each regrows the method).
    alpha : float, default=0.05
        Family-wise error rate of the ``"relevant"`` verdicts.
    random_state : int, default=0
        Seeds the observed forest (as ``compute_importances(random_state=...)``), the
        permutations and the leak folds: the same seed gives the same result.
    n_jobs, progress, should_stop
        As in :func:`~varimp_core.studies.nulls.permutation_null`.
    leaks : bool, default=True
        Add :func:`~varimp_core.data.leaks.find_leaks`'s warnings.
    test_estimators : int, optional
        Trees of each forest of the test (the observed and every permuted one), when
        fewer than ``n_estimators`` (:func:`verdict_size` picks it on large data).  The
        reported ``importances`` stay those of ``n_estimators`` trees, so
        ``above_chance`` is the plug-in bar minus the chance level; the test statistics
        and p-values are those of the smaller forests, grown alike on the observed and
        permuted targets (the rows stay exchangeable under the null).  Ignored by the
        exact methods.

    Returns
    -------
    VerdictResult

    Notes
    -----
    The permutation null makes every input irrelevant *and* keeps Y impure in
    every cell.  Under a partial null an irrelevant input of the real data,
    whose cells the relevant inputs make purer, gets an importance
    stochastically no larger than under permuted Y: the test is conservative
    for it, and the family-wise error rate stays at most alpha.

    Examples
    --------
    ``a`` is y with 10% of the rows flipped, ``b`` is independent of y:

    >>> import numpy as np
    >>> from varimp_core.data.table import DiscreteTable
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.integers(0, 2, 200), rng.integers(0, 3, 200)
    >>> y = np.where(rng.random(200) < 0.9, a, 1 - a)
    >>> t = DiscreteTable.from_codes(np.column_stack([a, b]), y, variables=("a", "b"))
    >>> v = importance_verdicts(t, method="exact", n_permutations=39)
    >>> v.verdict_map()
    {'a': 'relevant', 'b': 'chance'}
    """
    t0 = time.perf_counter()
    d = as_prepared(data)
    method = default_method(d.table) if method is None else method
    if method not in METHODS:
        raise ValueError(f"Unknown method {method!r}; choose one of: {', '.join(METHODS)}.")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a number between 0 and 1, not {alpha!r}.")
    R = check_int("n_permutations", n_permutations, 1)
    settings = dict(method=method, max_features=max_features, max_depth=max_depth,
                    n_estimators=n_estimators, bootstrap=bootstrap, k_semantics=k_semantics,
                    criterion=criterion, min_samples_leaf=min_samples_leaf)
    parameters = {k: v for k, v in settings.items() if k != "method"}
    parameters["random_state"] = random_state
    if test_estimators is not None and method not in EXACT_METHODS:
        parameters["test_estimators"] = min(int(test_estimators), int(n_estimators))
    warnings = tuple(find_leaks(d, random_state=random_state)) if leaks else ()
    if d.table.exact:
        observed = compute_importances(d, random_state=random_state, **settings)
        obs = np.asarray(observed.importances, dtype=float)
        p = obs.size
        relevant = obs > EXACT_TOLERANCE
        return VerdictResult(
            variables=tuple(d.variables), importances=obs, null_mean=np.zeros(p),
            null_sd=np.zeros(p), statistics=np.full(p, np.nan), p_adjusted=np.full(p, np.nan),
            verdicts=tuple("relevant" if r else "chance" for r in relevant),
            reasons=tuple(f"exact value {'>' if r else '<='} {EXACT_TOLERANCE:g}"
                          for r in relevant),
            procedure={"name": EXACT_PROCEDURE_NAME, "level": None, "n_permutations": 0,
                       "statistic": "the method's value on the exact distribution",
                       "rule": f"relevant iff the value exceeds {EXACT_TOLERANCE:g}; never "
                               "undecided", "method": method},
            warnings=warnings, method=method, parameters=parameters, exact=True,
            n_samples=None, units=observed.units, elapsed=time.perf_counter() - t0)
    test_trees = n_estimators
    if test_estimators is not None and method not in EXACT_METHODS:
        test_trees = min(check_int("test_estimators", test_estimators, 1), n_estimators)
    run = dict(settings, n_estimators=test_trees, n_permutations=R,
               random_state=random_state, n_jobs=n_jobs, progress=progress,
               should_stop=should_stop)
    full = _maxt_test(d, **run)
    obs, null_mean, null_sd, stats, p_adj = (a.copy() for a in full[:5])
    if test_trees < n_estimators and not full[7]:   # the reported plug-in: the method's own
        obs = np.asarray(compute_importances(d, random_state=random_state,
                                             **settings).importances, dtype=float).copy()
    done, units, cancelled = full[5], full[6], full[7]
    variables = tuple(d.variables)
    p = obs.size
    leak_names = [w["column"] for w in warnings]
    leak_cols = [variables.index(c) for c in leak_names]
    set_aside: tuple[str, ...] = ()
    if leak_cols and len(leak_cols) < p and done and bool(np.all(p_adj[leak_cols] <= alpha)):
        # Serial gatekeeping: the leaks, rejected in the full family, are set aside and the
        # others tested again without them (a leak absorbs Y's impurity and masks them).
        others = [j for j in range(p) if j not in leak_cols]
        reduced = _drop_inputs(d, leak_names)
        red = _maxt_test(reduced, **run)
        for a, b in zip((obs, null_mean, null_sd, stats, p_adj), red[:5]):
            a[others] = b
        if test_trees < n_estimators:
            obs[others] = compute_importances(reduced, random_state=random_state,
                                              **settings).importances
        done = min(done, red[5])
        cancelled = cancelled or red[7]
        set_aside = tuple(leak_names)
    powerless = done + 1 < 1.0 / alpha
    per_cell, sparse = sparse_variables(d)
    without = (f" (tested without the leak column{'s' if len(set_aside) > 1 else ''} "
               f"{', '.join(map(repr, set_aside))})") if set_aside else ""
    verdicts, reasons = [], []
    for j in range(p):
        note = without if set_aside and variables[j] not in set_aside else ""
        if done and p_adj[j] <= alpha:
            verdicts.append("relevant")
            reasons.append(f"adjusted p = {p_adj[j]:.3g} <= {alpha:g}{note}")
        elif powerless:
            verdicts.append("undecided")
            reasons.append(f"R + 1 = {done + 1} < 1/alpha: no p-value can reach {alpha:g}")
        elif sparse[j]:
            verdicts.append("undecided")
            reasons.append(f"{per_cell[j]:.2g} rows per (level x class) cell, fewer than "
                           f"{MIN_CELL_ROWS}")
        else:
            verdicts.append("chance")
            reasons.append(f"adjusted p = {p_adj[j]:.3g} > {alpha:g}{note}")
    procedure = {"name": PROCEDURE_NAME, "level": float(alpha), "n_permutations": done,
                 "statistic": STATISTIC, "undecided": _undecided_rule(alpha),
                 "method": method, "leaks": LEAK_STEP, "set_aside": list(set_aside),
                 "test_estimators": test_trees if method not in EXACT_METHODS else None}
    return VerdictResult(
        variables=variables, importances=obs, null_mean=null_mean, null_sd=null_sd,
        statistics=stats, p_adjusted=p_adj, verdicts=tuple(verdicts), reasons=tuple(reasons),
        procedure=procedure, warnings=warnings, method=method, parameters=parameters,
        exact=False, n_samples=int(round(d.table.total_weight)), units=units,
        set_aside=set_aside, cancelled=bool(cancelled), elapsed=time.perf_counter() - t0)


def _maxt_test(d: PreparedData, *, method, n_permutations, random_state, min_samples_leaf,
               n_jobs, progress, should_stop, **settings):
    """Observed values, null mean and sd, t, adjusted p, R done, units, cancelled."""
    observed = compute_importances(d, method=method, random_state=random_state,
                                   min_samples_leaf=min_samples_leaf, **settings)
    obs = np.asarray(observed.importances, dtype=float)
    p = obs.size
    null = permutation_null(d, n_permutations=n_permutations, method=method,
                            min_samples_leaf=min_samples_leaf, random_state=random_state,
                            n_jobs=n_jobs, progress=progress, should_stop=should_stop,
                            **settings)
    done = null.n_permutations
    p_adj, stats = maxt_adjusted(obs, null.null)
    null_mean = null.null.mean(axis=0) if done else np.full(p, np.nan)
    null_sd = null.null.std(axis=0, ddof=1) if done > 1 else np.full(p, np.nan)
    return obs, null_mean, null_sd, stats, p_adj, done, observed.units, bool(null.cancelled)


def _drop_inputs(d: PreparedData, names) -> PreparedData:
    """``d`` without the inputs ``names`` (rows unchanged)."""
    keep = [j for j, v in enumerate(d.variables) if v not in set(names)]
    t = d.table
    variables = tuple(d.variables[j] for j in keep)
    x_labels = tuple(t.x_labels[j] for j in keep) if t.x_labels else ()
    X_codes = None
    if d.X_codes is not None and d.y_codes is not None:
        X_codes = d.X_codes[:, keep]
        table = DiscreteTable.from_codes(X_codes, d.y_codes, variables=variables,
                                         target=t.target, x_labels=x_labels,
                                         y_labels=t.y_labels, exact=False)
    else:
        table = DiscreteTable(t.X[:, keep], t.y, t.weight, variables, t.target, x_labels,
                              t.y_labels, exact=t.exact).compressed()
    return replace(d, table=table, variables=variables,
                   X_numeric=None if d.X_numeric is None else d.X_numeric[:, keep],
                   X_codes=X_codes, kinds={v: d.kinds[v] for v in variables if v in d.kinds},
                   bin_edges={v: e for v, e in d.bin_edges.items() if v in variables})
