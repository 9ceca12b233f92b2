"""The engine of random-subspace feature selection: validation, draws, the tree loop.

Private helpers of :mod:`varimp_core.studies.selection`.  One scikit-learn
``ExtraTreeClassifier`` is grown per iteration on the ``q`` drawn columns plus
a random probe; only per-feature counters of size ``p`` are kept (how often a
feature was drawn, how often it beat the probe, its summed MDI), so memory does
not grow with the number of trees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from sklearn import config_context
from sklearn.metrics import average_precision_score
from sklearn.tree import ExtraTreeClassifier

from varimp_core.forests.sklearn_mdi import tree_mdi_by_depth

__all__: list[str] = []

METHODS = ("rs", "srs")
PROBES = ("permutation", "normal")
_CRITERIA = {"entropy": "entropy", "log_loss": "log_loss", "gini": "gini"}
_MAX_INT = np.iinfo(np.int32).max
#: Slack on the beta comparison, so that beta=0.95 with 20 draws asks for 19 wins.
_BETA_TOL = 1e-9


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


# -- validation ----------------------------------------------------------------------
def check_rule(min_sampled, beta) -> tuple[int, float]:
    """Validate L and beta of the probe rule."""
    if not _is_int(min_sampled) or min_sampled < 1:
        raise ValueError(f"min_sampled (L)={min_sampled!r} is not allowed: use an integer >= 1.")
    if not _is_number(beta) or not (0 < beta <= 1):
        raise ValueError(f"beta={beta!r} is not allowed: use a fraction of trees in (0, 1], "
                         "e.g. 0.95.")
    return int(min_sampled), float(beta)


def check_alpha(alpha) -> float:
    if not _is_number(alpha) or not (0 <= alpha <= 1):
        raise ValueError(f"alpha={alpha!r} is not allowed: use a number in [0, 1] "
                         "(0 gives plain random subspace).")
    return float(alpha)


def check_subspace_size(subspace_size, n_features: int) -> int:
    if not _is_int(subspace_size) or subspace_size < 1:
        raise ValueError(f"subspace_size (q)={subspace_size!r} is not allowed: use an integer >= 1.")
    if subspace_size > n_features:
        raise ValueError(f"subspace_size (q)={subspace_size} is larger than the number of "
                         f"features p={n_features}: use q <= p.")
    return int(subspace_size)


@dataclass
class Options:
    """Validated options of one run."""

    method: str
    subspace_size: int
    alpha: float
    max_features: int
    n_estimators: int
    min_sampled: int
    beta: float
    probe: str | None
    criterion: str
    random_state: int | None
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"method": self.method, "subspace_size": self.subspace_size, "alpha": self.alpha,
                "max_features": self.max_features, "n_estimators": self.n_estimators,
                "min_sampled": self.min_sampled, "beta": self.beta, "probe": self.probe,
                "criterion": self.criterion, "random_state": self.random_state, **self.extra}


def check_options(n_features: int, *, method, subspace_size, alpha, max_features, n_estimators,
                  min_sampled, beta, probe, criterion, random_state) -> Options:
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not allowed: use 'rs' (random subspace) or "
                         "'srs' (sequential random subspace).")
    q = check_subspace_size(subspace_size, n_features)
    a = check_alpha(alpha)
    if method == "rs":
        a = 0.0
    if not _is_int(n_estimators) or n_estimators < 1:
        raise ValueError(f"n_estimators (T)={n_estimators!r} is not allowed: use an integer >= 1.")
    L, b = check_rule(min_sampled, beta)
    if probe not in PROBES and probe is not None:
        raise ValueError(f"probe={probe!r} is not allowed: use 'permutation' (a permuted copy "
                         "of a drawn feature), 'normal' (a fresh Gaussian column) or None.")
    width = q + (probe is not None)
    if max_features is None:
        k = width
    elif not _is_int(max_features) or max_features < 1:
        raise ValueError(f"max_features (K)={max_features!r} is not allowed: use an integer >= 1 "
                         "or None (every column of the subspace).")
    else:
        k = min(int(max_features), width)
    if criterion not in _CRITERIA:
        raise ValueError(f"criterion={criterion!r} is not allowed: use 'entropy' or 'gini'.")
    if random_state is not None and (not _is_int(random_state) or random_state < 0):
        raise ValueError(f"random_state={random_state!r} is not allowed: use an integer >= 0 or None.")
    return Options(method, q, a, k, int(n_estimators), L, b, probe, _CRITERIA[criterion],
                   None if random_state is None else int(random_state))


def check_xy(X, y, what: str = "X") -> tuple[np.ndarray, np.ndarray]:
    try:
        Xa = np.asarray(X, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numeric: encode categorical columns as numbers first.") from None
    if Xa.ndim != 2 or Xa.shape[0] < 2 or Xa.shape[1] < 1:
        raise ValueError(f"{what} has shape {Xa.shape}: it must be 2-D with at least two rows and "
                         "one column.")
    if not np.all(np.isfinite(Xa)):
        raise ValueError(f"{what} contains NaN or infinite values: impute or drop them first.")
    ya = np.asarray(y)
    ya = ya[:, 0] if ya.ndim == 2 and ya.shape[1] == 1 else ya
    if ya.ndim != 1 or ya.shape[0] != Xa.shape[0]:
        raise ValueError(f"y has shape {ya.shape}: it must be 1-D with one value per row of {what} "
                         f"({Xa.shape[0]} rows).")
    return np.asfortranarray(Xa), ya


def relevant_mask(relevant, variables: tuple[str, ...]) -> np.ndarray | None:
    """Boolean mask of the truly relevant features from names, indices or a mask."""
    if relevant is None:
        return None
    p = len(variables)
    arr = np.asarray(relevant)
    if arr.dtype == bool:
        if arr.shape != (p,):
            raise ValueError(f"relevant is a mask of shape {arr.shape}, expected ({p},).")
        return arr.copy()
    mask = np.zeros(p, dtype=bool)
    index = {v: j for j, v in enumerate(variables)}
    for item in arr.ravel().tolist():
        if isinstance(item, str):
            if item not in index:
                raise ValueError(f"relevant names {item!r}, which is not one of the variables.")
            mask[index[item]] = True
        elif _is_int(item) and 0 <= item < p:
            mask[int(item)] = True
        else:
            raise ValueError(f"relevant contains {item!r}: use variable names, indices in "
                             f"[0, {p}) or a boolean mask.")
    return mask


# -- draws and the rule ----------------------------------------------------------------
def n_from_found(subspace_size: int, alpha: float, n_found: int) -> int:
    """|R| = min(floor(alpha q), |F|) -- Geurts (2016), SRS step 2.1."""
    return min(int(math.floor(alpha * subspace_size + 1e-9)), n_found)


def draw(rng: np.random.Generator, n_features: int, subspace_size: int, found: np.ndarray,
         alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """R: min(floor(alpha q), |F|) features of F; C: q - |R| features of V minus R."""
    k = n_from_found(subspace_size, alpha, found.size)
    if k == 0:
        return found[:0], rng.choice(n_features, size=subspace_size, replace=False)
    r = rng.choice(found, size=k, replace=False)
    keep = np.ones(n_features, dtype=bool)
    keep[r] = False
    c = rng.choice(np.flatnonzero(keep), size=subspace_size - k, replace=False)
    return r, c


def rule(n_sampled: np.ndarray, n_wins: np.ndarray, min_sampled: int, beta: float) -> np.ndarray:
    """Drawn more than L times and beat the probe in at least beta of those trees."""
    return (n_sampled > min_sampled) & (n_wins >= beta * n_sampled - _BETA_TOL)


# -- the loop ------------------------------------------------------------------------
@dataclass
class State:
    """Per-feature counters and per-checkpoint records of one run."""

    importance_sum: np.ndarray
    n_sampled: np.ndarray
    n_wins: np.ndarray
    ever_nonzero: np.ndarray
    probe_importances: list = field(default_factory=list)
    records: list = field(default_factory=list)
    n_done: int = 0
    stopped: bool = False

    def found(self, opts: Options) -> np.ndarray:
        """Boolean mask of F: the probe rule, or non-zero importance without a probe."""
        if opts.probe is None:
            return self.ever_nonzero.copy()
        return rule(self.n_sampled, self.n_wins, opts.min_sampled, opts.beta)


def _checkpoints(n_estimators: int, checkpoints) -> set[int]:
    if checkpoints is None:
        step = max(1, n_estimators // 50)
        return set(range(step, n_estimators + 1, step)) | {n_estimators}
    pts = {int(c) for c in np.atleast_1d(checkpoints)}
    if any(c < 1 for c in pts):
        raise ValueError("checkpoints must be tree counts >= 1.")
    return {c for c in pts if c <= n_estimators} | {n_estimators}


def run(X: np.ndarray, y_codes: np.ndarray, opts: Options, **kwargs) -> State:
    """Grow ``opts.n_estimators`` trees one after the other; return the counters.

    The data and options are validated once by the caller, so scikit-learn's
    per-fit parameter validation and finiteness checks are switched off here.
    """
    with config_context(assume_finite=True, skip_parameter_validation=True):
        return _run(X, y_codes, opts, **kwargs)


def _run(X: np.ndarray, y_codes: np.ndarray, opts: Options, *, X_test=None, y_test_codes=None,
         truth: np.ndarray | None = None, checkpoints=None,
         progress: Callable[[int, int], None] | None = None,
         should_stop: Callable[[], bool] | None = None) -> State:
    n, p = X.shape
    q = opts.subspace_size
    T = opts.n_estimators
    has_probe = opts.probe is not None
    # Subspaces and training probes on one stream, test-row probes on another: the
    # selection does not depend on whether test rows are given.
    rng, test_rng = (np.random.default_rng(s)
                     for s in np.random.SeedSequence(opts.random_state).spawn(2))
    # Tree seeds as ExtraTreesClassifier draws them (sklearn.ensemble._base._set_random_states),
    # so that q = p without a probe reproduces a plain forest tree by tree.
    seeds = np.random.RandomState(opts.random_state)
    state = State(np.zeros(p), np.zeros(p, dtype=np.int64), np.zeros(p, dtype=np.int64),
                  np.zeros(p, dtype=bool))
    width = q + has_probe
    buf = np.empty((n, width), dtype=np.float32, order="F")
    test_buf = None if X_test is None else np.empty((X_test.shape[0], width), np.float32, order="F")
    proba = None if X_test is None else np.zeros((X_test.shape[0], int(y_codes.max()) + 1))
    y_fit = y_codes.astype(np.float64)
    marks = _checkpoints(T, checkpoints)
    step = max(1, T // 100)
    found_idx = np.zeros(0, dtype=np.intp)
    for t in range(T):
        if should_stop is not None and should_stop():
            state.stopped = True
            break
        r, c = draw(rng, p, q, found_idx, opts.alpha)
        cols = np.sort(np.concatenate((r, c)))
        buf[:, :q] = X[:, cols]
        if test_buf is not None:
            test_buf[:, :q] = X_test[:, cols]
        if has_probe:
            _fill_probe(rng, test_rng, opts.probe, buf, test_buf, q)
        tree = ExtraTreeClassifier(criterion=opts.criterion, max_features=opts.max_features,
                                   random_state=int(seeds.randint(_MAX_INT)))
        tree.fit(buf, y_fit, check_input=False)
        local = tree_mdi_by_depth(tree).sum(axis=1)
        imp = local[:q]
        state.importance_sum[cols] += imp
        state.n_sampled[cols] += 1
        state.ever_nonzero[cols] |= imp > 0
        if has_probe:
            state.n_wins[cols] += imp > local[q]
            state.probe_importances.append(float(local[q]))
        if opts.alpha > 0:
            found_idx = np.flatnonzero(state.found(opts))
        if proba is not None:
            pr = tree.predict_proba(test_buf, check_input=False)
            proba[:, tree.classes_.astype(np.intp)] += pr
        state.n_done = t + 1
        if state.n_done in marks:
            state.records.append(_record(state, opts, proba, y_test_codes, truth))
        if progress is not None and (state.n_done % step == 0 or state.n_done == T):
            progress(state.n_done, T)
    if state.stopped and state.n_done and (not state.records
                                           or state.records[-1]["n_trees"] != state.n_done):
        state.records.append(_record(state, opts, proba, y_test_codes, truth))
    return state


def _fill_probe(rng, test_rng, kind, buf, test_buf, q):
    """Last column: a permuted copy of one drawn column, or fresh Gaussian noise."""
    if kind == "permutation":
        j = int(rng.integers(q))
        buf[:, q] = buf[rng.permutation(buf.shape[0]), j]
        if test_buf is not None:
            test_buf[:, q] = test_buf[test_rng.permutation(test_buf.shape[0]), j]
    else:
        buf[:, q] = rng.standard_normal(buf.shape[0])
        if test_buf is not None:
            test_buf[:, q] = test_rng.standard_normal(test_buf.shape[0])


def _record(state: State, opts: Options, proba, y_test_codes, truth) -> dict:
    T = state.n_done
    found = state.found(opts)
    rec = {"n_trees": T, "n_selected": int(found.sum())}
    if truth is not None:
        imp = state.importance_sum / T
        rec["auprc"] = float(average_precision_score(truth, imp)) if truth.any() else np.nan
        tp = int((found & truth).sum())
        rec["precision"] = tp / rec["n_selected"] if rec["n_selected"] else np.nan
        rec["recall"] = tp / int(truth.sum()) if truth.any() else np.nan
    if proba is not None:
        rec["accuracy"] = float(np.mean(np.argmax(proba, axis=1) == y_test_codes))
    return rec
