"""Seeded replicate engine and input noise, shared by the Monte Carlo studies.

Replicate r is seeded by the r-th child of ``SeedSequence(random_state)``, so a
study's numbers do not depend on how its replicates are split into chunks or
processes (joblib), or which machine runs them (a ``mapper``, e.g. Celery
workers, which the dashboard supplies).  Progress is reported per chunk and a
``should_stop()`` callable is checked between chunks; a stopped run returns the
replicates done.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from varimp_core.data.table import DiscreteTable

__all__ = ["run_replicates", "flip_input", "scaled_replicates", "DEFAULT_TREE_ROWS",
           "LOCAL_TREE_WORK"]

#: Trees times rows a study's default run grows, R x T x N: about a minute of one loaded
#: core with the multiway forest; a larger table gets fewer replicates by default.
DEFAULT_TREE_ROWS = 10_000_000


def scaled_replicates(default: int, n_rows: int | None, n_estimators: int, *,
                      budget: int = DEFAULT_TREE_ROWS, low: int = 10) -> int:
    r"""The default number of replicates R for data of ``n_rows`` rows: ``default`` scaled down.

    :math:`R = \min(R_0, \max(R_{low}, \lfloor B / (T N) \rfloor))`: the default R_0
    while R_0 T N fits the budget B, else as many replicates as fit, never fewer than
    ``low`` (a histogram of fewer values says little).  A table of 10,000 rows with T = 50
    gets 20 replicates; a problem sample of 500 rows keeps 100.

    Parameters
    ----------
    default : int
        R_0, the study's default.
    n_rows : int or None
        N, the rows of each replicate data set (None: unknown, ``default`` is kept).
    n_estimators : int
        T, trees per replicate.
    budget, low : int

    Returns
    -------
    int
    """
    if not n_rows:
        return int(default)
    return int(min(default, max(low, budget // (int(n_rows) * max(1, int(n_estimators))))))


#: Trees times rows times inputs a local-importance forest grows by default (Dependence,
#: Interactions: K = p, every input is tried at every node).
LOCAL_TREE_WORK = 12_000_000


# -- engine --------------------------------------------------------------------
def check_int(name, value, low, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be a whole number of at least {low}{extra}, got {value!r}.")
    return int(value)


def _run_chunk(job, seeds) -> np.ndarray:
    return np.vstack([job(s) for s in seeds])


def run_replicates(job, seeds, *, n_jobs=1, chunk_size=None, progress=None, should_stop=None,
                   mapper=None, partial=None, partial_every: float = 0.0):
    """Run ``job(seed)`` for every seed, in chunks, serially, in joblib processes or by a mapper.

    Parameters
    ----------
    job : picklable callable
        ``job(seed_sequence) -> ndarray of shape (width,)``.
    seeds : list of numpy.random.SeedSequence
    n_jobs : int, default=1
        joblib's convention (-1: every core); 1 runs in this process.
    chunk_size : int, optional
        Replicates per task; default about 20 chunks (8 per worker when more).
    progress : callable, optional
        ``progress(done, total)`` after each chunk.
    should_stop : callable, optional
        Asked before each chunk is started or collected; True stops the run.
    mapper : callable, optional
        Runs the chunks elsewhere (other processes or machines):
        ``mapper(job, chunks)`` gets the list of chunks (each a list of seeds)
        and returns an iterator of ``(chunk_index, rows)`` pairs, in any order,
        as chunks finish -- or None to decline (then ``n_jobs`` applies).  Its
        ``close()``, if any, is called when the run ends or stops early.
    partial : callable, optional
        ``partial(rows)`` after each chunk but the last, with the replicates done so far
        (in seed order): a study draws its result so far from them.  It does not change
        the replicates, so the final rows do not depend on it.
    partial_every : float, default=0.0
        Seconds at least between two calls of ``partial`` (the first comes after the first
        chunk): a caller that shows one partial result every so often need not have the
        others built (on Madelon's 500 variables each costs fitted laws and histograms).

    Returns
    -------
    rows : ndarray of shape (n_done, width)
        The replicates done, in seed order (without a mapper, the first
        ``n_done``).
    cancelled : bool
    """
    import joblib

    total = len(seeds)
    workers = max(1, int(joblib.effective_n_jobs(n_jobs)))
    if chunk_size is None:
        chunk_size = max(1, math.ceil(total / max(20, 8 * workers)))
    chunk_size = check_int("chunk_size", chunk_size, 1)
    bounds = [(lo, min(lo + chunk_size, total)) for lo in range(0, total, chunk_size)]
    stop = should_stop or (lambda: False)
    done, parts, cancelled, last_partial = 0, {}, False, None
    source = None if mapper is None else mapper(job, [seeds[lo:hi] for lo, hi in bounds])
    if source is not None:
        results = iter(source)
    else:
        if workers == 1 or len(bounds) == 1:
            source = (_run_chunk(job, seeds[lo:hi]) for lo, hi in bounds)
        else:
            source = joblib.Parallel(n_jobs=workers, return_as="generator")(
                joblib.delayed(_run_chunk)(job, seeds[lo:hi]) for lo, hi in bounds)
        results = enumerate(source)
    try:
        for _ in bounds:
            if stop():
                cancelled = True
                break
            i, part = next(results)
            parts[i] = np.asarray(part)
            done += parts[i].shape[0]
            if progress is not None:
                progress(done, total)
            now = time.monotonic()
            if partial is not None and done < total and (
                    last_partial is None or now - last_partial >= partial_every):
                partial(np.vstack([parts[i] for i in sorted(parts)]))
                last_partial = now
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            with warnings.catch_warnings():  # joblib reports the tasks it cancels
                warnings.simplefilter("ignore", UserWarning)
                close()
    return (np.vstack([parts[i] for i in sorted(parts)]) if parts else np.zeros((0, 0))), \
        cancelled


def child_seed(seq: np.random.SeedSequence, k: int) -> np.random.SeedSequence:
    """k-th child of ``seq`` without mutating its spawn counter."""
    return np.random.SeedSequence(seq.entropy, spawn_key=tuple(seq.spawn_key) + (k,),
                                  pool_size=seq.pool_size)


def root_seed(random_state) -> np.random.SeedSequence:
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    return np.random.SeedSequence(check_int("random_state", random_state, 0, allow_none=True))


def seed_record(root: np.random.SeedSequence):
    """The random_state to record: the int, or (entropy, spawn_key) for a child sequence."""
    return root.entropy if not root.spawn_key else [root.entropy, list(root.spawn_key)]


def int_seed(seq: np.random.SeedSequence) -> int:
    return int(seq.generate_state(1, np.uint32)[0])


def flip_values(values: np.ndarray, levels: np.ndarray, q: float, rng) -> np.ndarray:
    """Replace each value, with probability q, by one of the other levels drawn uniformly."""
    L = len(levels)
    if q == 0 or L < 2:
        return values
    hit = rng.random(values.shape[0]) < q
    idx = np.searchsorted(levels, values[hit])
    out = values.copy()
    out[hit] = levels[(idx + rng.integers(1, L, size=idx.shape[0])) % L]
    return out


def flip_input(table: DiscreteTable, variable, probability: float) -> DiscreteTable:
    """The distribution after replacing ``variable`` by another of its levels with probability q.

    Each row splits into one row kept with weight :math:`(1-q)w` and one row
    per other level with weight :math:`q\\,w/(L-1)` -- the exact counterpart
    of the per-sample flip that :func:`monte_carlo` applies to each replicate.

    Parameters
    ----------
    table : DiscreteTable
    variable : str or int
    probability : float in [0, 1]

    Returns
    -------
    DiscreteTable
        Compressed; ``exact`` as in ``table``.
    """
    j = variable_index(table.variables, variable)
    q = check_probability(probability)
    L = int(table.n_levels[j])
    if q == 0 or L < 2:
        return table
    shifts = np.arange(L)
    X = np.repeat(table.X, L, axis=0)
    X[:, j] = (X[:, j] + np.tile(shifts, table.n_rows)) % L
    share = np.where(shifts == 0, 1 - q, q / (L - 1))
    w = np.repeat(table.weight, L) * np.tile(share, table.n_rows)
    return DiscreteTable(X, np.repeat(table.y, L), w, table.variables, table.target,
                         table.x_labels, table.y_labels, table.exact).compressed()


def variable_index(variables, variable) -> int:
    if isinstance(variable, (int, np.integer)) and not isinstance(variable, bool):
        if not 0 <= variable < len(variables):
            raise ValueError(f"Variable index {variable} is out of range 0..{len(variables) - 1}.")
        return int(variable)
    if variable not in variables:
        raise ValueError(f"Unknown variable {variable!r}; choose one of: {', '.join(variables)}.")
    return list(variables).index(variable)


def check_probability(q) -> float:
    if isinstance(q, bool) or not isinstance(q, (int, float, np.number)) or not 0 <= q <= 1:
        raise ValueError(f"The flip probability must be a number between 0 and 1, got {q!r}.")
    return float(q)
