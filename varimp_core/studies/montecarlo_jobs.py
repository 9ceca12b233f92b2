"""Replicate jobs of the Monte Carlo engine: one data set, one forest, one row of importances.

Private helpers of :mod:`varimp_core.studies.montecarlo` (and :mod:`varimp_core.studies.nulls`).
A job is called with a replicate's ``SeedSequence`` and returns the
importances of every variable plus the data set's I(X;Y) (NaN when unknown).
Jobs on built-in problems can travel as JSON (:meth:`_ProblemJob.to_dict`,
:func:`job_from_dict`), so a mapper can run them on other machines with the
same numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache

import numpy as np
import pandas as pd

from varimp_core.api import compute_importances
from varimp_core.data.prepare import PreparedData, prepare_numeric_sample, prepare_table
from varimp_core.problems.registry import Problem, get_problem
from varimp_core.studies.replicates import child_seed, flip_values, int_seed
from varimp_core.data.table import DiscreteTable

__all__ = ["as_prepared", "job_from_dict"]


# -- data of one replicate -----------------------------------------------------
@lru_cache(maxsize=32)
def _problem(spec: str) -> Problem:
    return get_problem(spec)


def as_prepared(data) -> PreparedData:
    """Wrap a :class:`DiscreteTable` as :class:`PreparedData` (PreparedData passes through)."""
    if isinstance(data, PreparedData):
        return data
    if not isinstance(data, DiscreteTable):
        raise ValueError(f"Expected a problem spec, PreparedData or a DiscreteTable, got "
                         f"{type(data).__name__}.")
    n = None if data.exact else int(round(data.total_weight))
    return PreparedData(table=data, X_numeric=None, y=None, variables=data.variables,
                        target=data.target, kinds={v: "discrete" for v in data.variables},
                        task="classification", bin_edges={}, n_samples=n, source="table")


@dataclass(frozen=True)
class JobOptions:
    method: str
    n_estimators: int
    max_features: int
    max_depth: int | None
    bootstrap: bool | None
    k_semantics: str
    criterion: str
    min_samples_leaf: int

    def importances(self, data: PreparedData, seed: int) -> np.ndarray:
        r = compute_importances(data, method=self.method, max_features=self.max_features,
                                max_depth=self.max_depth, n_estimators=self.n_estimators,
                                bootstrap=self.bootstrap, k_semantics=self.k_semantics,
                                criterion=self.criterion, random_state=seed,
                                min_samples_leaf=self.min_samples_leaf)
        info = np.nan if r.information is None else r.information
        return np.append(r.importances, info)


def _coded_frame(frame: pd.DataFrame, problem: Problem) -> PreparedData | None:
    """Fast path for discrete classification problems whose values are already codes.

    Same importances as :func:`prepare_table` (which would recode the values in
    sorted order) at a fraction of its cost; None when the frame does not qualify.
    """
    if not problem.discrete or problem.task != "classification":
        return None
    X = frame[list(problem.variables)].to_numpy()
    y = frame[problem.target].to_numpy()
    if X.dtype.kind not in "iu" or y.dtype.kind not in "iu" or X.min() < 0 or y.min() < 0:
        return None
    table = DiscreteTable.from_codes(X, y, variables=problem.variables, target=problem.target)
    return PreparedData(table=table, X_numeric=X.astype(float), y=y, variables=problem.variables,
                        target=problem.target, kinds={v: "discrete" for v in problem.variables},
                        task="classification", bin_edges={}, n_samples=int(X.shape[0]),
                        source=problem.spec)


@dataclass(frozen=True)
class ProblemJob:
    """One replicate: sample N rows of a problem, flip an input, grow, measure."""

    spec: str
    n_samples: int
    options: JobOptions
    flip_variable: str | None = None
    flip_probability: float = 0.0
    bins: int = 5
    max_levels: int = 20

    def data(self, seed: np.random.SeedSequence) -> PreparedData:
        problem = _problem(self.spec)
        frame = problem.sample(self.n_samples, random_state=child_seed(seed, 0))
        if self.flip_variable is not None and self.flip_probability > 0:
            col = frame[self.flip_variable].to_numpy()
            levels = np.unique(col)
            if set(levels.tolist()) <= {0, 1}:        # a binary column may miss a level
                levels = np.array([0, 1], dtype=col.dtype)
            frame[self.flip_variable] = flip_values(col, levels, self.flip_probability,
                                                     np.random.default_rng(child_seed(seed, 1)))
        fast = _coded_frame(frame, problem)
        if fast is None and not problem.discrete:   # continuous inputs (Madelon, gauss)
            fast = prepare_numeric_sample(frame, problem.target, max_levels=self.max_levels,
                                          bins=self.bins, task=problem.task,
                                          source=problem.spec)
        if fast is not None:
            return fast
        kinds = {v: "discrete" for v in problem.variables} if problem.discrete else None
        return prepare_table(frame, problem.target, max_levels=self.max_levels, bins=self.bins,
                             kinds=kinds, task=problem.task, source=problem.spec,
                             identifiers="keep")  # every variable of a problem is an input

    def __call__(self, seed: np.random.SeedSequence) -> np.ndarray:
        return self.options.importances(self.data(seed), int_seed(child_seed(seed, 2)))

    def to_dict(self) -> dict:
        """JSON-able description of the job; :func:`job_from_dict` rebuilds it."""
        return {"kind": "problem", "spec": self.spec, "n_samples": self.n_samples,
                "options": asdict(self.options), "flip_variable": self.flip_variable,
                "flip_probability": self.flip_probability, "bins": self.bins,
                "max_levels": self.max_levels}


def job_from_dict(spec: dict):
    """Rebuild a replicate job of a built-in problem from its ``to_dict()``.

    A ``mapper`` of :func:`run_replicates` sends the dict (JSON) to another
    process or machine and calls the rebuilt job there on the same seeds, so
    the replicates are the same numbers as in a local run.  Jobs on uploaded
    tables have no ``to_dict`` and always run locally.
    """
    if not isinstance(spec, dict) or spec.get("kind") != "problem":
        raise ValueError("Only replicate jobs of built-in problems can be rebuilt from a dict.")
    options = JobOptions(**{f.name: spec["options"][f.name] for f in fields(JobOptions)})
    return ProblemJob(get_problem(spec["spec"]).spec, int(spec["n_samples"]), options,
                       spec.get("flip_variable"), float(spec.get("flip_probability", 0.0)),
                       int(spec.get("bins", 5)), int(spec.get("max_levels", 20)))


@dataclass(frozen=True)
class TableJob:
    """One replicate: a bootstrap replicate (multinomial counts) of a table's rows."""

    data: PreparedData
    n_samples: int
    options: JobOptions
    flip_variable: str | None = None
    flip_probability: float = 0.0

    def replicate(self, seed: np.random.SeedSequence) -> PreparedData:
        d, n = self.data, self.n_samples
        rng = np.random.default_rng(child_seed(seed, 0))
        flip = np.random.default_rng(child_seed(seed, 1))
        j = None if self.flip_variable is None else d.variables.index(self.flip_variable)
        q = self.flip_probability
        if self.options.method.startswith("sklearn") and d.X_numeric is not None:
            idx = rng.integers(0, d.X_numeric.shape[0], size=n)
            X, y = d.X_numeric[idx], d.y[idx]
            if j is not None and q > 0:
                X = X.copy()
                X[:, j] = flip_values(X[:, j], np.unique(d.X_numeric[:, j]), q, flip)
            return replace(d, X_numeric=X, y=y, n_samples=n, X_codes=None, y_codes=None)
        t = d.table
        counts = rng.multinomial(n, t.probabilities)
        keep = counts > 0
        X, y, w = t.X[keep], t.y[keep], counts[keep].astype(float)
        if j is not None and q > 0:
            X, y = np.repeat(X, counts[keep], axis=0), np.repeat(y, counts[keep])
            X[:, j] = flip_values(X[:, j], np.arange(t.n_levels[j]), q, flip)
            w = np.ones(n)
        table = DiscreteTable(X, y, w, t.variables, t.target, t.x_labels, t.y_labels,
                              exact=False).compressed()
        if not self.options.method.startswith("sklearn"):
            return replace(d, table=table, X_numeric=None, y=None, n_samples=n, X_codes=None,
                           y_codes=None)
        Xn, yn = table.expand()
        return replace(d, table=table, X_numeric=Xn.astype(float), y=yn, n_samples=n,
                       X_codes=None, y_codes=None)

    def __call__(self, seed: np.random.SeedSequence) -> np.ndarray:
        return self.options.importances(self.replicate(seed), int_seed(child_seed(seed, 2)))
