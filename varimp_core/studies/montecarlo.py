"""Finite-sample studies: the distribution of importances over many data sets.

Sutera (2013, ch. 3) draws a thousand data sets from a problem, grows a
forest on each and tabulates every variable's importance (mean, standard
deviation, histogram) against the asymptotic value, then repeats over the
sample size N, the number of trees T, the number of irrelevant variables and
the noise.  :func:`monte_carlo` runs one such experiment and :func:`sweep`
repeats it over the values of one parameter.

Replicates come from a built-in problem (a fresh sample of N rows each time)
or, for uploaded data, from bootstrap replicates of the table's rows.  Each
replicate r is seeded by child r of ``np.random.SeedSequence(random_state)``,
so results do not depend on ``n_jobs`` or ``chunk_size``.  Replicates are
grouped in chunks, one joblib task per chunk; between chunks the engine calls
``progress(done, total)`` and asks ``should_stop()``.

Cancellation returns the replicates finished so far in a result flagged
``cancelled=True`` (never an exception): a dashboard can still draw them.

Variance over data sets and trees decomposes as (Sutera 2013, eq. 3.23)

.. math:: \\mathrm{Var}[\\widehat{\\mathrm{Imp}}_T] = a + b / T,

with :math:`a` the variance of the infinite forest over data sets (run with
``method="exact"`` to measure it) and :math:`b` the mean variance of one tree.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from varimp_core.studies.montecarlo_jobs import JobOptions, ProblemJob, TableJob, as_prepared
from varimp_core.api import METHODS, compute_importances
from varimp_core.problems.registry import Problem, canonical_spec, get_problem, parse_spec
from varimp_core.studies.replicates import (check_int, check_probability, child_seed,
                                            variable_index, root_seed, seed_record, flip_input,
                                            run_replicates)
from varimp_core.data.table import DiscreteTable
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["MonteCarloResult", "monte_carlo", "sweep", "sweep_statistics", "QUANTILES", "SWEEP_PARAMETERS",
           "SWEEP_LABELS", "parameter_label", "SWEEP_DEFAULTS", "default_sweep_values",
           "parse_sweep_values",
           "EXACT_MAX_ROWS"]

#: Quantiles reported by :meth:`MonteCarloResult.summary` (columns q05 ... q95).
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: Parameters :func:`sweep` can vary.
SWEEP_PARAMETERS = ("n_samples", "n_estimators", "max_features", "max_depth", "irrelevant",
                    "noise", "input_noise")
#: How axes and sentences name each sweep parameter.
SWEEP_LABELS = {
    "n_samples": "N (samples per data set)",
    "n_estimators": "T (trees)",
    "max_features": "K",
    "max_depth": "maximum depth",
    "irrelevant": "irrelevant variables added",
    "noise": "output noise",
    "input_noise": "input noise (flip rate)",
}


def parameter_label(parameter: str) -> str:
    """Axis title of a sweep parameter, e.g. ``"T (trees)"``."""
    return SWEEP_LABELS.get(parameter, parameter)
#: Largest distribution (in rows) for which asymptotic values are computed beside the runs.
EXACT_MAX_ROWS = 2**16
_EXACT_MAX_FEATURES = 16


# -- result --------------------------------------------------------------------
@dataclass(frozen=True)
class MonteCarloResult:
    """Importances of every variable over R replicate data sets.

    Parameters
    ----------
    variables : tuple of str
    replicates : ndarray of shape (n_replicates, n_features)
        Importance of each variable on each replicate (unnormalised MDI).
    information : ndarray of shape (n_replicates,)
        Plug-in :math:`I(X;Y)` of each replicate (NaN for scikit-learn methods);
        fully grown K=1 forests sum to it, replicate by replicate (Theorem 2).
    exact : ndarray of shape (n_features,) or None
        Asymptotic (infinite sample, infinite forest) values at the same K and
        depth, when the distribution is known and small enough.
    exact_source : {"distribution", "full sample"} or None
        What ``exact`` was computed on: the problem's exact distribution, or
        the whole uploaded table (the centre of its bootstrap replicates).
    relevant : tuple of str or None
        The truly relevant variables of a built-in problem.
    n_levels : ndarray of shape (n_features,)
        Levels of each input in the discrete table; ``n_classes`` likewise.
    n_classes : int
    parameters : dict
        Everything that determines the numbers (not ``n_jobs``).
    problem : str
        Problem spec or data source.
    n_requested : int
        Replicates asked for; ``n_replicates`` may be fewer when cancelled.
    cancelled : bool
        True when ``should_stop()`` ended the run early.
    elapsed : float
        Wall-clock seconds.
    population : DiscreteTable or None
        The distribution replicates are drawn from (exact table, possibly with
        input noise, or the uploaded table itself), when known.
    """

    variables: tuple[str, ...]
    replicates: np.ndarray
    information: np.ndarray
    exact: np.ndarray | None
    exact_source: str | None
    relevant: tuple[str, ...] | None
    n_levels: np.ndarray
    n_classes: int
    parameters: dict
    problem: str
    n_requested: int
    cancelled: bool = False
    elapsed: float = 0.0
    population: DiscreteTable | None = field(default=None, repr=False, compare=False)

    @property
    def n_replicates(self) -> int:
        return int(self.replicates.shape[0])

    @property
    def mean(self) -> np.ndarray:
        """Mean importance over replicates, ndarray of shape (n_features,)."""
        if not self.n_replicates:
            return np.full(len(self.variables), np.nan)
        return self.replicates.mean(axis=0)

    @property
    def std(self) -> np.ndarray:
        """Standard deviation over replicates (ddof=1), the thesis' tables' second column."""
        if self.n_replicates < 2:
            return np.full(len(self.variables), np.nan)
        return self.replicates.std(axis=0, ddof=1)

    @property
    def sem(self) -> np.ndarray:
        """Monte Carlo standard error of the mean, std / sqrt(R)."""
        return self.std / math.sqrt(max(self.n_replicates, 1))

    @property
    def std_sem(self) -> np.ndarray:
        """Standard error of ``std`` (delta method with the sample fourth moment).

        .. math:: \\mathrm{SE}(s) \\approx \\frac{1}{2s}\\sqrt{\\frac{m_4 - s^4 (R-3)/(R-1)}{R}}
        """
        R = self.n_replicates
        if R < 4:
            return np.full(len(self.variables), np.nan)
        s = self.std
        m4 = ((self.replicates - self.mean) ** 4).mean(axis=0)
        var_s2 = np.maximum(m4 - s**4 * (R - 3) / (R - 1), 0.0) / R
        return np.divide(np.sqrt(var_s2), 2 * s, out=np.zeros_like(s), where=s > 0)

    def quantiles(self, q=QUANTILES) -> np.ndarray:
        """ndarray of shape (len(q), n_features)."""
        if not self.n_replicates:
            return np.full((len(q), len(self.variables)), np.nan)
        return np.quantile(self.replicates, q, axis=0)

    def summary(self) -> pd.DataFrame:
        """One row per variable: mean, std, their standard errors, quantiles, exact value."""
        df = pd.DataFrame({"variable": list(self.variables), "mean": self.mean, "std": self.std,
                           "sem": self.sem, "std_sem": self.std_sem})
        for q, row in zip(QUANTILES, self.quantiles()):
            df[_qname(q)] = row
        df["exact"] = self.exact if self.exact is not None else np.nan
        df["relevant"] = [None if self.relevant is None else v in self.relevant
                          for v in self.variables]
        df["n_replicates"] = self.n_replicates
        return df

    def replicates_frame(self) -> pd.DataFrame:
        """Long format: one row per (replicate, variable) with ``importance``."""
        R, p = self.replicates.shape
        return pd.DataFrame({"replicate": np.repeat(np.arange(R), p),
                             "variable": list(self.variables) * R,
                             "importance": self.replicates.ravel()})

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "MonteCarloResult":
        """The MonteCarloResult that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _qname(q: float) -> str:
    return f"q{int(round(q * 100)):02d}"


# -- public entry points -------------------------------------------------------
def _resolve(source):
    """(kind, spec or PreparedData, problem or None)."""
    if isinstance(source, Problem):
        return "problem", source.spec, source
    if isinstance(source, str):
        p = get_problem(source)
        return "problem", p.spec, p
    return "table", as_prepared(source), None


def _relevant_of(source: str) -> tuple[str, ...] | None:
    """The relevant variables when a prepared table came from a built-in problem."""
    try:
        return get_problem(source).relevant
    except ValueError:
        return None


def _population(kind, payload, problem, flip_variable, q):
    if kind == "problem":
        if not problem.has_exact or problem.exact_rows > EXACT_MAX_ROWS:
            return None, None
        table, label = problem.exact_table(), "distribution"
    else:
        table = payload.table
        label = "distribution" if table.exact else "full sample"
    if flip_variable is not None and q > 0:
        table = flip_input(table, flip_variable, q)
    return table, label


def _exact_values(table, options: JobOptions, cache: dict, key):
    if table is None or table.n_features > _EXACT_MAX_FEATURES or table.n_rows > EXACT_MAX_ROWS:
        return None
    semantics = "sklearn" if options.method.startswith("sklearn") else options.k_semantics
    criterion = options.criterion if options.criterion in ("entropy", "gini") else "entropy"
    full = (key, options.max_features, options.max_depth, semantics, criterion)
    if full not in cache:
        try:
            cache[full] = compute_importances(
                table, method="exact", max_features=min(options.max_features, table.n_features),
                max_depth=options.max_depth, k_semantics=semantics, criterion=criterion).importances
        except ValueError:
            cache[full] = None
    return cache[full]


def monte_carlo(source, *, n_replicates: int = 100, n_samples: int | None = None,
                method: str = "forest", n_estimators: int = 100, max_features: int = 1,
                max_depth: int | None = None, bootstrap: bool | None = None,
                k_semantics: str = "id3", criterion: str = "entropy", min_samples_leaf: int = 1,
                flip_variable=None, flip_probability: float = 0.0, exact: bool = True,
                random_state: int | None = 0, n_jobs: int = 1, chunk_size: int | None = None,
                progress=None, should_stop=None, bins: int = 5, max_levels: int = 20,
                mapper=None, partial=None, partial_every: float = 0.0,
                _cache: dict | None = None) -> MonteCarloResult:
    """Grow a forest on each of R data sets and record every variable's importance.

    Parameters
    ----------
    source : str, Problem, PreparedData or DiscreteTable
        A problem spec (``"xor:relevant=2,irrelevant=2"``): each replicate is a
        fresh sample of ``n_samples`` rows.  A table: each replicate is a
        bootstrap replicate of its rows (an exact table: a sample of
        ``n_samples`` rows from the distribution).
    n_replicates : int, default=100
        R, the number of data sets.
    n_samples : int, optional
        N. Default: the problem's ``default_samples``, or the table's size.
    method : {"forest", "sklearn-et", "sklearn-rf", "exact"}, default="forest"
        ``"exact"`` grows the infinite forest on each replicate, isolating the
        data set's share :math:`a` of the variance.
    n_estimators, max_features, max_depth, bootstrap, k_semantics, criterion, min_samples_leaf
        As in :func:`varimp_core.api.compute_importances` (T, K, depth ...).
    flip_variable : str or int, optional
        Input noise: this input is replaced by another of its levels with
        probability ``flip_probability`` in every replicate (discrete inputs).
    flip_probability : float, default=0.0
    exact : bool, default=True
        Compute the asymptotic values beside the runs when the distribution
        has at most :data:`EXACT_MAX_ROWS` rows and 16 inputs.
    random_state : int or None, default=0
        Root of ``SeedSequence(random_state).spawn(R)``; None draws fresh entropy
        (recorded in ``parameters["random_state"]``).
    n_jobs : int, default=1
        joblib processes; results do not depend on it.
    chunk_size : int, optional
        Replicates per task (see :func:`run_replicates`); results do not depend on it.
    progress : callable, optional
        ``progress(done, total)`` after each chunk.
    should_stop : callable, optional
        Checked between chunks; True ends the run and returns the replicates done,
        with ``cancelled=True``.
    bins, max_levels : int
        Typing of sampled problem frames, as in :func:`varimp_core.data.prepare.prepare_table`.
    mapper : callable, optional
        Runs the chunks elsewhere, e.g. on Celery workers (see
        :func:`run_replicates`); results do not depend on it.
    partial : callable, optional
        ``partial(result)`` after each chunk but the last: the :class:`MonteCarloResult` of
        the replicates done so far (``cancelled=True``), for a page to draw while the run
        goes on; the final result does not depend on it.
    partial_every : float, default=0.0
        Seconds at least between two partial results (the others are not built).

    Returns
    -------
    MonteCarloResult

    Examples
    --------
    >>> r = monte_carlo("xor:relevant=2,irrelevant=2", n_replicates=20, n_samples=500)
    >>> r.replicates.shape, [round(float(v), 2) for v in r.exact]
    ((20, 4), [0.5, 0.5, 0.0, 0.0])
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise ValueError(f"Unknown method {method!r}; choose one of: {', '.join(METHODS)}.")
    R = check_int("n_replicates", n_replicates, 1)
    kind, payload, problem = _resolve(source)
    variables = problem.variables if problem else payload.variables
    if n_samples is None:
        if kind == "problem":
            n_samples = problem.default_samples
        elif payload.table.exact:
            raise ValueError("This table is an exact distribution: give n_samples, the size of "
                             "each data set drawn from it.")
        else:
            n_samples = int(round(payload.table.total_weight))
    N = check_int("n_samples", n_samples, 1)
    options = JobOptions(method, check_int("n_estimators", n_estimators, 1),
                       check_int("max_features", max_features, 1),
                       check_int("max_depth", max_depth, 1, allow_none=True),
                       bootstrap, k_semantics, criterion,
                       check_int("min_samples_leaf", min_samples_leaf, 1))
    if options.max_features > len(variables):
        raise ValueError(f"max_features (K) must be between 1 and the number of variables "
                         f"{len(variables)}, got {max_features}.")
    q = check_probability(flip_probability)
    flip = None if flip_variable is None else variables[variable_index(variables, flip_variable)]
    if flip is not None and q > 0:
        discrete = problem.discrete if problem else payload.kinds.get(flip) == "discrete"
        if not discrete:
            raise ValueError(f"Input noise needs a discrete input; {flip!r} is numeric.")
    root = root_seed(random_state)
    seeds = [child_seed(root, r) for r in range(R)]
    if kind == "problem":
        job = ProblemJob(payload, N, options, flip, q, bins, max_levels)
    else:
        job = TableJob(payload, N, options, flip, q)
    exact_cache = {} if _cache is None else _cache  # a partial result reuses the exact values

    def build(rows, cancelled: bool) -> MonteCarloResult:
        p = len(variables)
        rows = rows.reshape(-1, p + 1)
        population, label = _population(kind, payload, problem, flip, q)
        key = (payload if kind == "problem" else "table", flip, q)
        values = _exact_values(population, options, exact_cache, key) if exact else None
        if population is not None:
            n_levels, n_classes = population.n_levels, population.n_classes
        else:
            first = job.data(seeds[0]) if kind == "problem" else job.replicate(seeds[0])
            n_levels, n_classes = first.table.n_levels, first.table.n_classes
        return MonteCarloResult(
            variables=tuple(variables), replicates=rows[:, :p], information=rows[:, p],
            exact=None if values is None else np.asarray(values, dtype=float),
            exact_source=label if values is not None else None,
            relevant=problem.relevant if problem else _relevant_of(payload.source),
            n_levels=np.asarray(n_levels), n_classes=int(n_classes),
            parameters={"method": method, "n_samples": N,
                        "n_estimators": options.n_estimators,
                        "max_features": options.max_features, "max_depth": options.max_depth,
                        "bootstrap": bootstrap, "k_semantics": k_semantics,
                        "criterion": criterion,
                        "min_samples_leaf": options.min_samples_leaf, "flip_variable": flip,
                        "flip_probability": q, "random_state": seed_record(root),
                        "replicates_from": "problem samples" if kind == "problem" else "bootstrap"},
            problem=payload if kind == "problem" else payload.source, n_requested=R,
            cancelled=cancelled, elapsed=time.perf_counter() - t0, population=population)

    rows, cancelled = run_replicates(
        job, seeds, n_jobs=n_jobs, chunk_size=chunk_size, progress=progress,
        should_stop=should_stop, mapper=mapper, partial_every=partial_every,
        partial=None if partial is None else (lambda done: partial(build(done, True))))
    return build(rows, cancelled)


def _with_option(spec: str, key: str, value) -> str:
    name, options = parse_spec(spec)
    if key not in options:
        raise ValueError(f"Problem '{name}' has no option {key!r}, so it cannot be swept.")
    return get_problem(canonical_spec(name, {**options, key: value})).spec


def sweep(source, parameter: str, values, *, n_replicates: int = 100, random_state: int | None = 0,
          progress=None, should_stop=None, replicates: bool = False, partial=None,
          **kwargs) -> pd.DataFrame:
    """Repeat :func:`monte_carlo` for each value of one parameter.

    Parameters
    ----------
    source : str, Problem, PreparedData or DiscreteTable
        As in :func:`monte_carlo`; ``"irrelevant"`` and ``"noise"`` need a
        problem spec with that option.
    parameter : {"n_samples", "n_estimators", "max_features", "max_depth", "irrelevant", \
"noise", "input_noise"}
        ``"noise"`` is the problem's own noise option (output flips for XOR and
        SYM); ``"input_noise"`` is ``flip_probability`` of ``flip_variable``
        (default: the first input).
    values : sequence
    n_replicates : int, default=100
    random_state : int or None, default=0
        Value i uses ``SeedSequence(random_state).spawn(len(values))[i]``:
        independent replicates across values.
    progress, should_stop : callable, optional
        Over the whole sweep: ``progress(done, len(values) * n_replicates)``.
    replicates : bool, default=False
        False: one row per (value, variable) with the columns of
        :meth:`MonteCarloResult.summary`; True: one row per replicate with ``importance``.
    partial : callable, optional
        ``partial(frame)`` after each value but the last: the rows of the values done so
        far (``attrs["cancelled"]`` True), for a page to draw; the result does not depend on it.
    **kwargs
        Every other option of :func:`monte_carlo`.

    Returns
    -------
    pandas.DataFrame
        Tidy: ``param``, ``value``, ``variable``, then the statistics and
        ``exact``.  ``attrs["cancelled"]`` is True when stopped early (values not
        reached are absent, the last one may have fewer replicates: see ``n_replicates``).
    """
    if parameter not in SWEEP_PARAMETERS:
        raise ValueError(f"Unknown sweep parameter {parameter!r}; choose one of: "
                         f"{', '.join(SWEEP_PARAMETERS)}.")
    values = list(values)
    if not values:
        raise ValueError("values is empty; give at least one value to sweep over.")
    if parameter in kwargs:
        raise ValueError(f"{parameter!r} is the swept parameter; do not also pass it.")
    if parameter in ("irrelevant", "noise"):
        spec = source.spec if isinstance(source, Problem) else source
        if not isinstance(spec, str):
            raise ValueError(f"Sweeping {parameter!r} needs a problem spec, not uploaded data.")
    R = check_int("n_replicates", n_replicates, 1)
    total, done, frames, cancelled = R * len(values), 0, [], False
    root = root_seed(random_state)
    seeds = [child_seed(root, i) for i in range(len(values))]
    cache: dict = {}
    for value, seed in zip(values, seeds):
        if should_stop is not None and should_stop():
            cancelled = True
            break
        src, kw = source, dict(kwargs)
        if parameter in ("irrelevant", "noise"):
            src = _with_option(spec, parameter, value)
        elif parameter == "input_noise":
            kw["flip_probability"] = value
            kw.setdefault("flip_variable", 0)
        else:
            kw[parameter] = value
        offset = done
        r = monte_carlo(src, n_replicates=R, random_state=seed, should_stop=should_stop,
                        progress=None if progress is None else
                        (lambda d, _t, o=offset: progress(o + d, total)),
                        _cache=cache, **kw)
        done += r.n_replicates
        frame = r.replicates_frame() if replicates else r.summary()
        if replicates:
            exact = dict(zip(r.variables, r.exact)) if r.exact is not None else {}
            frame["exact"] = frame["variable"].map(exact).astype(float)
        frame.insert(0, "value", [value] * len(frame))
        frame.insert(0, "param", parameter)
        frames.append(frame)
        if r.cancelled:
            cancelled = True
            break
        if partial is not None and len(frames) < len(values):
            so_far = pd.concat(frames, ignore_index=True)
            so_far.attrs["cancelled"] = True
            partial(so_far)
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    out.attrs["cancelled"] = cancelled
    out.attrs["parameter"] = parameter
    return out


# -- statistics of a sweep ---------------------------------------------------------
def _tie_groups(reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest rank (1 = most important) of each value's tie group."""
    r = np.round(-np.asarray(reference, float), 9)
    return rankdata(r, method="min"), rankdata(r, method="max")


def sweep_statistics(df: pd.DataFrame) -> pd.DataFrame:
    """Per value and variable: mean, std, exact and rank stability of a sweep.

    Parameters
    ----------
    df : DataFrame
        :func:`~varimp_core.studies.montecarlo.sweep` output.  With
        ``replicates=True`` (columns ``value``, ``replicate``, ``variable``,
        ``importance``, ``exact``) every statistic is computed here; a summary
        frame (``replicates=False``, columns ``mean``, ``std`` ...) passes
        through with ``stability`` NaN.

    Returns
    -------
    DataFrame
        ``value``, ``variable``, ``mean``, ``std`` (ddof=1), ``sem``,
        ``exact``, ``n_replicates`` and ``stability``: the share of replicates
        in which the variable's rank (1 = most important, ties averaged) lies
        in the ranks its tie group takes in the reference order -- the exact
        values when all are known at that value, else the mean importances.
    """
    cols = ["value", "variable", "mean", "std", "sem", "exact", "n_replicates", "stability"]
    if df is None or df.empty:
        return pd.DataFrame(columns=cols)
    if "importance" not in df.columns:
        out = df[["value", "variable", "mean", "std", "sem", "exact", "n_replicates"]].copy()
        out["stability"] = np.nan
        return out[cols]
    rows = []
    order = list(dict.fromkeys(df["variable"]))
    for value, d in df.groupby("value", sort=False):
        # "irrelevant" adds inputs.  The set once per value: made for each variable, it cost
        # p x R x p steps (Madelon: 25 million a value, 82 s of a 101 s sweep).
        here = set(d["variable"].unique())
        present = [v for v in order if v in here]
        wide = d.pivot(index="replicate", columns="variable", values="importance")[present]
        x = wide.to_numpy(float)
        R = x.shape[0]
        exact = d.groupby("variable", sort=False)["exact"].first().reindex(present)
        exact = exact.to_numpy(float)
        mean = x.mean(axis=0)
        std = x.std(axis=0, ddof=1) if R > 1 else np.full(len(present), np.nan)
        reference = exact if np.all(np.isfinite(exact)) else mean
        low, high = _tie_groups(reference)
        ranks = np.vstack([rankdata(-row, method="average") for row in x]) if R else \
            np.zeros((0, len(present)))
        stable = ((ranks >= low) & (ranks <= high)).mean(axis=0) if R else \
            np.full(len(present), np.nan)
        for j, v in enumerate(present):
            rows.append({"value": value, "variable": v, "mean": mean[j], "std": std[j],
                         "sem": std[j] / math.sqrt(R) if R else np.nan, "exact": exact[j],
                         "n_replicates": R, "stability": stable[j]})
    return pd.DataFrame(rows, columns=cols)


#: Values a new sweep of each parameter starts with (text for an input box).
SWEEP_DEFAULTS = {"n_samples": "50,200,1000", "n_estimators": "1,10,50", "max_depth": "1,2,3",
                  "irrelevant": "0,2,4", "noise": "0,0.1,0.2,0.3", "input_noise": "0,0.1,0.2,0.3"}


def default_sweep_values(parameter: str | None, p: int | None = None) -> str:
    """Values a new sweep of ``parameter`` starts with; K runs 1 to min(p, 4)."""
    if parameter in (None, "none"):
        return ""
    if parameter == "max_features":
        return ",".join(str(k) for k in range(1, max(1, min(p or 3, 4)) + 1))
    return SWEEP_DEFAULTS.get(parameter, "")


def parse_sweep_values(text, parameter: str, *, p: int | None = None, max_values: int = 8,
                       max_samples: int | None = None, max_trees: int | None = None) -> list:
    """The values of a sweep typed as text ("1, 10, 50"), checked, unique, increasing.

    Parameters
    ----------
    text : str
        Values separated by commas, semicolons or spaces.
    parameter : str
        One of :data:`SWEEP_PARAMETERS`: ``noise`` and ``input_noise`` take
        probabilities in [0, 1]; the others whole numbers (``irrelevant`` from 0,
        the others from 1; K at most ``p``; N at most ``max_samples``; T at most
        ``max_trees``; depth at most 1000; irrelevant at most 50).
    max_values : int, default=8
        The most values one sweep takes.

    Raises
    ------
    ValueError
        With a sentence naming the bad value and what is allowed.
    """
    parts = [t for t in re.split(r"[,;\s]+", str(text or "").strip()) if t]
    label = parameter_label(parameter)
    if not parts:
        raise ValueError(f"Enter the values of {label} to sweep, separated by commas "
                         "(e.g. 1, 10, 50).")
    if len(parts) > max_values:
        raise ValueError(f"A sweep takes at most {max_values} values; got {len(parts)}.")
    low = 0 if parameter == "irrelevant" else 1
    high = {"n_samples": max_samples, "n_estimators": max_trees, "max_features": p,
            "max_depth": 1000, "irrelevant": 50}.get(parameter)
    out = []
    for t in parts:
        try:
            x = float(t)
        except ValueError:
            raise ValueError(f"The sweep value {t!r} is not a number.") from None
        if not math.isfinite(x):
            raise ValueError(f"The sweep value {t!r} is not a finite number.")
        if parameter not in ("noise", "input_noise"):
            if x != int(x) or x < low or (high is not None and x > high):
                upper = f" to {high:,}" if high is not None else " or more"
                raise ValueError(f"Values of {label} must be whole numbers from {low}{upper}; "
                                 f"{t!r} is not.")
            out.append(int(x))
        elif not 0 <= x <= 1:
            raise ValueError(f"Values of {label} are probabilities from 0 to 1; {t!r} is not.")
        else:
            out.append(x)
    return sorted(set(out))
