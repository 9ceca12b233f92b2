"""The exact law of a finite forest: mean *and covariance* of one random tree's MDI vector.

A forest of T trees grown without bootstrap on a fixed table averages T
i.i.d. random trees, so its importance vector has mean :math:`\\mu` (what
:func:`~varimp_core.api.compute_importances` computes for the exact methods)
and covariance :math:`\\Sigma / T`, with :math:`\\Sigma` the covariance of one
tree's importance vector.  This module computes :math:`\\Sigma` exactly, over
the same memoised nodes as the mean (``docs/exact-moments.md`` has the
derivation), and derives from it standard errors, how many trees a given
precision needs, and the probability that T trees rank two variables the
wrong way round (by the central limit theorem).

* ``exact`` (multiway trees): one pass down the node lattice for the reach
  r(b) (as the mean does), one pass up it for :math:`V(b)`, the expected
  importance vector of the subtree grown at b; the second moment is
  accumulated on the way up as

  .. math::

      E[I I^T] = \\sum_b r(b) \\sum_s P_b(s) \\Big[ A_s A_s^T - \\sum_c V(c) V(c)^T \\Big],
      \\qquad A_s = g_s e_{v(s)} + \\sum_c V(c),

  so the pass holds one vector of p numbers per node (two lattice levels at
  a time) and the reach, not a p x p matrix per node.
  At K = 1 (id3, entropy or Gini) the lattice is skipped: every node is a
  cell of one dense tensor and V is one compiled pass over it
  (:func:`_k1_dense_pass`).
* ``exact-rf`` / ``exact-et`` (scikit-learn's binary trees): the mean's
  batched solver, keeping each batch's split outcomes, then an up pass by
  size holding :math:`V(t)` and :math:`C(t) = Cov(I_t)` per node
  (:func:`_binary_moments_batched`); the memoised Python re-walk
  (:class:`BinaryWalker`) is the fallback for keys past 62 bits.
* :func:`moments_from_trees`: the same summaries estimated from the per-tree
  importances of a sampled forest (``estimated=True``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["ImportanceMoments", "exact_moments", "moments_from_trees",
           "MAX_MOMENT_ENTRIES", "MAX_BINARY_MOMENT_NODES"]

#: Budget of floats the multiway pass holds (nodes x (p + 1)), about 240 MB.
MAX_MOMENT_ENTRIES = 30_000_000
#: Budget of distinct nodes of the binary re-walk (each holds p + p^2 floats).
MAX_BINARY_MOMENT_NODES = 20_000


def _phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@dataclass(frozen=True)
class ImportanceMoments:
    """Mean and per-tree covariance of a forest's MDI vector, exact or estimated.

    Attributes
    ----------
    variables : tuple of str
    mean : ndarray (p,)
        Expected importance of one tree = the infinite forest's importances.
    covariance : ndarray (p, p)
        Covariance of one tree's importance vector; a forest of T trees
        (bootstrap off) has covariance ``covariance / T``.
    method, parameters, units, problem
        As in :class:`~varimp_core.result.ImportanceResult`.
    estimated : bool
        True when mean and covariance are sample estimates from ``n_trees`` trees.
    n_trees : int or None
        Trees behind an estimate.
    """

    variables: tuple
    mean: np.ndarray
    covariance: np.ndarray
    method: str
    parameters: dict = field(default_factory=dict)
    units: str = "bits"
    problem: str | None = None
    estimated: bool = False
    n_trees: int | None = None

    def __post_init__(self):
        p = len(self.variables)
        mean = np.asarray(self.mean, dtype=float)
        cov = np.asarray(self.covariance, dtype=float)
        if mean.shape != (p,) or cov.shape != (p, p):
            raise ValueError(f"mean {mean.shape} and covariance {cov.shape} do not match "
                             f"{p} variables.")
        object.__setattr__(self, "variables", tuple(self.variables))
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "covariance", cov)

    # -- summaries ---------------------------------------------------------
    @property
    def variances(self) -> np.ndarray:
        """Per-tree variance of each importance (clipped at 0 against rounding)."""
        return np.maximum(np.diag(self.covariance), 0.0)

    def standard_errors(self, n_trees: int) -> np.ndarray:
        """Standard error of each importance of a forest of ``n_trees`` trees: sigma_j / sqrt(T)."""
        T = _check_trees(n_trees)
        return np.sqrt(self.variances / T)

    def expected_abs_error(self, n_trees: int) -> np.ndarray:
        """E|forest - infinite forest| per variable, sqrt(2/pi) sigma_j / sqrt(T) (CLT)."""
        return math.sqrt(2.0 / math.pi) * self.standard_errors(n_trees)

    def trees_needed(self, eps: float) -> int:
        """Smallest T with every standard error below ``eps`` (T > sigma_j^2 / eps^2)."""
        if not eps > 0:
            raise ValueError(f"eps must be positive, got {eps!r}.")
        v = float(self.variances.max(initial=0.0))
        T = max(1, int(math.floor(v / eps ** 2)) + 1)
        while math.sqrt(v / T) >= eps:             # guard the division's rounding
            T += 1
        while T > 1 and math.sqrt(v / (T - 1)) < eps:
            T -= 1
        return T

    def trees_needed_each(self, eps: float) -> np.ndarray:
        """Per variable, the smallest T with its standard error below ``eps``.

        .. math:: T_j = \\min\\{T \\ge 1 : \\sigma_j / \\sqrt{T} < \\varepsilon\\}
                      = \\lfloor \\sigma_j^2 / \\varepsilon^2 \\rfloor + 1

        (1 for a variable whose importance does not vary from tree to tree);
        :meth:`trees_needed` is their maximum.
        """
        if not eps > 0:
            raise ValueError(f"eps must be positive, got {eps!r}.")
        out = []
        for v in self.variances.tolist():
            T = max(1, int(math.floor(v / eps ** 2)) + 1)
            while math.sqrt(v / T) >= eps:
                T += 1
            while T > 1 and math.sqrt(v / (T - 1)) < eps:
                T -= 1
            out.append(T)
        return np.array(out, dtype=np.int64)

    def interval_half_widths(self, n_trees: int, level: float = 0.95) -> np.ndarray:
        """Half-width of the interval holding a forest of T trees with probability ``level``.

        .. math:: h_j = z_{(1+\\text{level})/2}\\, \\sqrt{\\Sigma_{jj} / T}

        (the central limit theorem: a forest's importance of variable j is about
        :math:`N(\\mu_j, \\Sigma_{jj}/T)`; z = 1.96 at 95%).
        """
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level!r}.")
        from statistics import NormalDist
        return NormalDist().inv_cdf((1 + level) / 2) * self.standard_errors(n_trees)

    def _pair(self, i, j):
        d = float(self.mean[i] - self.mean[j])
        v = float(self.covariance[i, i] + self.covariance[j, j] - 2 * self.covariance[i, j])
        return d, max(v, 0.0)

    def flip_probabilities(self, n_trees: int) -> np.ndarray:
        """P(a forest of T trees orders variables i and j the other way round), (p, p).

        :math:`\\Phi(-|\\mu_i-\\mu_j|\\sqrt{T}/\\sqrt{\\Sigma_{ii}+\\Sigma_{jj}-2\\Sigma_{ij}})` by
        the CLT; 0 when that variance is 0 (the difference is then constant), 1/2
        when the means are equal and the difference varies; 0 on the diagonal.
        """
        T = _check_trees(n_trees)
        p = len(self.variables)
        out = np.zeros((p, p))
        for i in range(p):
            for j in range(i + 1, p):
                d, v = self._pair(i, j)
                if v <= 1e-300:
                    f = 0.0
                elif abs(d) <= _TIED * max(1.0, abs(self.mean[i])):
                    f = 0.5
                else:
                    f = _phi(-abs(d) * math.sqrt(T) / math.sqrt(v))
                out[i, j] = out[j, i] = f
        return out

    def _adjacent_pairs(self):
        """Pairs whose order makes the ranking: every cross pair of consecutive tie groups."""
        order = np.argsort(-self.mean, kind="stable")
        groups, cur = [], [int(order[0])] if order.size else []
        for a in order[1:]:
            if abs(self.mean[a] - self.mean[cur[0]]) <= _TIED * max(1.0, abs(self.mean[cur[0]])):
                cur.append(int(a))
            else:
                groups.append(cur)
                cur = [int(a)]
        if cur:
            groups.append(cur)
        return [(i, j) for g, h in zip(groups, groups[1:]) for i in g for j in h]

    def ranking_error_bound(self, n_trees: int) -> float:
        """Bonferroni bound on P(the ranking of T trees is wrong): sum of adjacent flips.

        Variables with equal means form one group whose internal order does not
        count; the ranking is right exactly when every variable of each group
        comes out above every variable of the next group (then, by
        transitivity, above all lower groups), so P(wrong) <= the sum of those
        pairs' flip probabilities.
        """
        T = _check_trees(n_trees)
        total = 0.0
        for i, j in self._adjacent_pairs():
            d, v = self._pair(i, j)
            if v > 1e-300:
                total += _phi(-abs(d) * math.sqrt(T) / math.sqrt(v))
        return min(total, 1.0)

    def stable_ranking_trees(self, level: float = 0.95) -> int:
        """Smallest T with the Bonferroni bound giving P(ranking right) >= ``level``.

        The approximation: CLT flip probabilities, summed over the pairs of
        consecutive groups (:meth:`ranking_error_bound`); the bound is
        conservative, so the true T needed is at most this.
        """
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level!r}.")
        ok = lambda t: self.ranking_error_bound(t) <= 1 - level  # noqa: E731
        lo, hi = 1, 1
        while not ok(hi):
            lo, hi = hi, hi * 2
            if hi > 2 ** 62:
                raise ValueError("No finite number of trees reaches that level.")
        if ok(lo):
            return lo
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return hi

    # -- serialisation -----------------------------------------------------
    def to_dict(self) -> dict:
        return {"variables": list(self.variables), "mean": self.mean.tolist(),
                "covariance": self.covariance.tolist(), "method": self.method,
                "parameters": dict(self.parameters), "units": self.units,
                "problem": self.problem, "estimated": bool(self.estimated),
                "n_trees": self.n_trees}

    @classmethod
    def from_dict(cls, d: dict) -> "ImportanceMoments":
        return cls(variables=tuple(d["variables"]), mean=np.asarray(d["mean"], float),
                   covariance=np.asarray(d["covariance"], float), method=d["method"],
                   parameters=dict(d.get("parameters") or {}), units=d.get("units", "bits"),
                   problem=d.get("problem"), estimated=bool(d.get("estimated", False)),
                   n_trees=d.get("n_trees"))

    def to_frame(self, n_trees: int | None = None):
        """One row per variable: mean, per-tree sd, and (with ``n_trees``) SE and E|error|."""
        import pandas as pd
        frame = pd.DataFrame({"variable": list(self.variables), "mean": self.mean,
                              "sd_per_tree": np.sqrt(self.variances)})
        for j, v in enumerate(self.variables):
            frame[f"cov_{v}"] = self.covariance[:, j]
        if n_trees is not None:
            frame["standard_error"] = self.standard_errors(n_trees)
            frame["expected_abs_error"] = self.expected_abs_error(n_trees)
        frame["estimated"] = bool(self.estimated)
        return frame


#: Means closer than this (relative) count as tied in the ranking.
_TIED = 1e-9


def _check_trees(n_trees):
    if isinstance(n_trees, bool) or not isinstance(n_trees, (int, np.integer)) or n_trees < 1:
        raise ValueError(f"The number of trees must be a whole number >= 1, got {n_trees!r}.")
    return int(n_trees)


# ---------------------------------------------------------------------------
# multiway trees: reach down the lattice, subtree means up it
# ---------------------------------------------------------------------------

def _children_sum(parent: np.ndarray, values: np.ndarray, n_parent: int) -> np.ndarray:
    """Sum of the rows of ``values`` (n_child, p) by parent cell: (n_parent, p)."""
    p = values.shape[1]
    flat = (parent[:, None] * p + np.arange(p)).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=n_parent * p).reshape(n_parent, p)


def _multiway_pass(lattice, p, K, max_depth, k_semantics):
    """(mean (p,), second moment E[I I^T] (p, p)) of one random multiway tree."""
    from varimp_core.exact.recursion import win_probabilities

    n_nodes = sum(node.prob.shape[0] for node in lattice.values())
    if n_nodes * (p + 1) > MAX_MOMENT_ENTRIES:
        raise ValueError(
            f"The exact covariance of the importances would hold about {n_nodes * (p + 1):.2g} "
            f"numbers ({n_nodes:,} nodes times {p + 1}) for these {p} variables, beyond the "
            f"limit of {MAX_MOMENT_ENTRIES:.0e}; lower the depth, use fewer variables or bins, "
            "or estimate it from a sampled forest's trees.")
    # down: reach of every node (as the mean's recursion), and the win law where it splits
    reach = {0: np.ones(lattice[0].prob.shape[0])}
    split = {}
    for mask in sorted(lattice, key=lambda m: bin(m).count("1")):
        r = reach.get(mask)
        if r is None:
            continue
        node = lattice[mask]
        depth = bin(mask).count("1")
        if depth >= max_depth:
            continue
        active = (r > 0) & (node.prob > 0) & ~node.pure
        if not active.any():
            continue
        win = win_probabilities(node, active, K, k_semantics, p)
        split[mask] = (active, win)
        if depth + 1 >= max_depth:
            continue
        flow = r[active] * win
        for i, v in enumerate(node.candidates):
            push = np.zeros(node.prob.shape[0])
            push[active] = flow[i]
            child = mask | 1 << v
            contrib = push[node.child_parent[i]]
            reach[child] = reach[child] + contrib if child in reach else contrib
    # up: V(b) level by level; E[I I^T] accumulated with the reach
    second = np.zeros((p, p))
    level_v: dict[int, np.ndarray] = {}
    by_size: dict[int, list] = {}
    for mask in split:
        by_size.setdefault(bin(mask).count("1"), []).append(mask)
    for size in sorted(by_size, reverse=True):
        new_v = {}
        for mask in by_size[size]:
            node = lattice[mask]
            active, win = split[mask]
            r = reach[mask][active]
            n = node.prob.shape[0]
            vt = np.zeros((int(active.sum()), p))
            for i, v in enumerate(node.candidates):
                w = win[i]
                if not w.any():
                    continue
                child = mask | 1 << v
                if child in level_v:
                    vc = level_v[child]
                    a = _children_sum(node.child_parent[i], vc, n)[active]
                    wr_child = (r * w)
                    full = np.zeros(n)
                    full[active] = wr_child
                    cw = full[node.child_parent[i]]
                    keep = cw > 0
                    vk = vc[keep]
                    second -= (vk * cw[keep, None]).T @ vk
                else:
                    a = np.zeros((vt.shape[0], p))
                a[:, v] += node.prob[active] * node.delta[i, active]
                vt += w[:, None] * a
                second += (a * (r * w)[:, None]).T @ a
            full_v = np.zeros((n, p))
            full_v[active] = vt
            new_v[mask] = full_v
        level_v = new_v
    mean = level_v[0][0] if 0 in level_v else np.zeros(p)
    return mean, second


def _k1_subtree_means_py(share, source, strides, c):
    """V of every cell, children first (compiled with numba below; this is its source).

    ``V[b] = source[b] + share[b] * sum over free v, values x of V[child(b, v, x)]``.
    A child differs from its parent on one axis only, where it holds a value
    x < c_v and the parent the free slot c_v, so its flat (C-order) index is
    smaller: the cells in flat order are children first, each child final
    when its parent reads it -- one sequential pass, no temporaries.
    """
    n, q = source.shape               # q columns of V (the inputs that gain somewhere)
    V = source.copy()
    for b in range(n):
        s = share[b]
        if s == 0.0:
            continue
        for v in range(c.size):       # every axis: a split on any input moves the tree
            cv = c[v]
            st = strides[v]
            if (b // st) % (cv + 1) != cv:
                continue
            base = b - cv * st
            for x in range(cv):
                ch = base + x * st
                for j in range(q):
                    V[b, j] += s * V[ch, j]
    return V


_K1_KERNEL = []


def _k1_subtree_means(*args):
    """:func:`_k1_subtree_means_py` compiled by numba on first use (importing numba costs
    about 0.7 s, so ``import varimp_core`` does not pay it; the kernel is cached on disk)."""
    if not _K1_KERNEL:
        try:
            from numba import njit
            _K1_KERNEL.append(njit(cache=True, nogil=True)(_k1_subtree_means_py))
        except ImportError:              # pragma: no cover - numba is a dependency
            _K1_KERNEL.append(_k1_subtree_means_py)
    return _K1_KERNEL[0](*args)


def _free_sum(t: np.ndarray, axis: int, c: int) -> np.ndarray:
    """Sum over the values 0..c-1 of ``axis`` (the children of the cells with that axis free)."""
    lead = (slice(None),) * axis
    out = t[lead + (0,)].copy()
    for x in range(1, c):           # slice by slice: a strided reduce is several times slower
        out += t[lead + (x,)]
    return out


def _at_free(t: np.ndarray, axis: int, c: int) -> np.ndarray:
    """The cells whose ``axis`` is free (index c): a view without that axis."""
    return t[(slice(None),) * axis + (c,)]


def _k1_dense_cells(table) -> int:
    """Cells of the K = 1 grid, :math:`\\prod_j (c_j + 1)`."""
    return int(np.prod(table.n_levels.astype(float) + 1.0))


def _k1_dense_pass(table, criterion, max_depth):
    """(mean, E[I I^T]) of a totally randomized tree (K = 1, id3) on the dense cell grid.

    Every node of every subset is a cell of one tensor with an axis per input
    of length :math:`c_j + 1` (index :math:`c_j`: the input is not on the
    branch).  With k inputs fixed at a cell b, a random K = 1 tree reaches b
    with probability :math:`r(b) = 1/\\binom{p}{k}` (the weight of Louppe et
    al. 2013, Eqn 3) and splits it on each free input with probability
    1/(p - k), so

    .. math::

        V(b) = \\frac{1}{p-k} \\sum_{v \\notin B} A_v(b), \\qquad
        A_v(b) = G_v(b)\\, e_v + \\sum_x V(b, X_v = x),

        E[I I^T] = \\sum_b \\frac{r(b)}{p-k} \\sum_{v \\notin B}
            \\Big[A_v A_v^T - \\sum_x V(b, X_v{=}x)\\, V(b, X_v{=}x)^T\\Big](b)

    with :math:`G_v(b) = p(b)\\, i(b) - \\sum_x p(b, x)\\, i(b, x)` (clipped at
    0, as the lattice) and V = 0 at pure, empty and depth-limited cells
    (``docs/exact-moments.md``, "K = 1 on the cell grid").  The class
    weights of every cell are the joint table's with a "free" slot appended
    per axis (its sum); V is one compiled pass over the cells, children first;
    the second moment is one weighted Gram matrix per input plus one for the
    children's term (each child cell weighted by the sum of its parents'
    r/(p - k)).
    """
    from math import comb
    from varimp_core.exact.lattice import weighted_impurity
    p = table.n_features
    c = [int(v) for v in table.n_levels]
    ny = table.n_classes
    shape = tuple(v + 1 for v in c)
    counts = np.bincount(np.ravel_multi_index((*table.X.T, table.y), tuple(c) + (ny,)),
                         weights=table.probabilities,
                         minlength=int(np.prod(c)) * ny).reshape(tuple(c) + (ny,))
    for j in range(p):                      # append the "free" slot: the sum over the axis
        counts = np.concatenate([counts, counts.sum(axis=j, keepdims=True)], axis=j)
    imp = weighted_impurity(counts, criterion)
    level = np.zeros(shape, dtype=np.int64)  # inputs fixed at each cell
    for j in range(p):
        level = level + (np.arange(shape[j]) < c[j]).reshape((-1,) + (1,) * (p - 1 - j))
    split = ((counts > 0).sum(axis=-1) > 1) & (level < max_depth)   # impure, within depth
    del counts
    share = np.where(split, 1.0 / np.maximum(p - level, 1), 0.0)    # P(split on a given v)
    gains = [np.where(_at_free(split, v, c[v]),
                      np.maximum(_at_free(imp, v, c[v]) - _free_sum(imp, v, c[v]), 0.0), 0.0)
             for v in range(p)]
    # An input whose gain is 0 at every cell adds 0 to every tree's importances: its entry
    # of V is 0 everywhere, and so are its row and column of E[I I^T].  V and the Gram
    # matrices carry only the q inputs that gain somewhere (XOR 3 + 9: 3 of 12); splits on
    # the others still move the tree, so every axis is still walked.
    active = [v for v in range(p) if gains[v].any()]
    column = {v: i for i, v in enumerate(active)}
    q = len(active)
    mean, second = np.zeros(p), np.zeros((p, p))
    if q == 0:
        return mean, second
    source = np.zeros(shape + (q,))          # share(b) G_v(b) e_v, v free at b
    for v in active:
        _at_free(source, v, c[v])[..., column[v]] = gains[v] * _at_free(share, v, c[v])
    strides = np.array([int(np.prod(shape[j + 1:], dtype=np.int64)) for j in range(p)],
                       dtype=np.int64)
    V = _k1_subtree_means(share.ravel(), source.reshape(-1, q), strides,
                          np.array(c, dtype=np.int64)).reshape(shape + (q,))
    del source
    mean[active] = V[tuple(c)]
    reach = np.array([1.0 / comb(p, k) for k in range(p + 1)])
    omega = reach[level] * share             # r(b) / (p - k) where b splits
    gram = np.zeros((q, q))
    child_w = np.zeros(shape)
    for v in range(p):
        a = _free_sum(V, v, c[v])
        if v in column:
            a[..., column[v]] += gains[v]
        a = a.reshape(-1, q)
        w = _at_free(omega, v, c[v]).reshape(-1)
        gram += (a * w[:, None]).T @ a
        child_w[(slice(None),) * v + (slice(0, c[v]),)] += np.expand_dims(
            _at_free(omega, v, c[v]), v)
    Vf = V.reshape(-1, q)
    gram -= (Vf * child_w.reshape(-1)[:, None]).T @ Vf
    second[np.ix_(active, active)] = gram
    return mean, second


# ---------------------------------------------------------------------------
# binary trees: memoised re-walk of the row sets with the production split law
# ---------------------------------------------------------------------------

class BinaryWalker:
    """Nodes of scikit-learn's binary trees as row sets, with their split outcomes.

    ``outcomes(rows, horizon)`` lists (probability, feature, gain, left, right,
    threshold interval) of every split the randomized splitter can choose,
    from :func:`~varimp_core.exact.binary.split_win_probabilities` -- the law
    the exact binary mean uses -- with scikit-learn's leaf rules (pure, fewer
    than 2 * min_samples_leaf samples, depth limit; split even at zero gain).
    """

    def __init__(self, X, y, *, method, max_features, max_depth, min_samples_leaf,
                 criterion, sample_weight):
        from varimp_core.exact.binary import PreparedBinary
        from varimp_core.exact.splitting import validate_max_features
        if method not in ("exact-rf", "exact-et"):
            raise ValueError(f"method must be exact-rf or exact-et here, got {method!r}.")
        self.d = PreparedBinary(X, y, sample_weight, criterion)
        self.p = self.d.n_features
        self.K = validate_max_features(max_features, self.p)
        self.method = method
        self.max_depth = max_depth
        self.L = int(min_samples_leaf)
        self.W = self.d.total_weight
        self.criterion = criterion

    def rows_of(self, rows):
        """Row indices of a node given as a bit mask (int) or as a sequence of indices."""
        if isinstance(rows, int):
            return np.array([i for i in range(self.d.y.size) if rows >> i & 1], dtype=np.int64)
        return np.asarray(rows, dtype=np.int64)

    @property
    def root(self):
        """The root node's bit mask: every distinct row."""
        return (1 << self.d.y.size) - 1

    def wimp(self, rows):
        from varimp_core.exact.binary import weighted_node_impurity
        rows = self.rows_of(rows)
        c = np.bincount(self.d.y[list(rows)], weights=self.d.weight[list(rows)],
                        minlength=self.d.n_classes)
        return float(weighted_node_impurity(c, self.criterion))

    def class_weights(self, rows):
        rows = self.rows_of(rows)
        return np.bincount(self.d.y[list(rows)], weights=self.d.weight[list(rows)],
                           minlength=self.d.n_classes)

    def is_leaf(self, rows, depth):
        d = self.d
        rows = self.rows_of(rows)
        if self.max_depth is not None and depth >= self.max_depth:
            return True
        if d.count[list(rows)].sum() < max(2, 2 * self.L):
            return True
        return len({int(d.y[i]) for i in rows}) <= 1

    def outcomes(self, rows):
        from varimp_core.exact.binary import TIE_FRACTION, weighted_node_impurity, split_win_probabilities
        d = self.d
        rows = self.rows_of(rows)
        onehot = np.zeros((rows.size, d.n_classes))
        onehot[np.arange(rows.size), d.y[rows]] = d.weight[rows]
        tot = onehot.sum(axis=0)
        node = float(weighted_node_impurity(tot, self.criterion))
        Wt = float(tot.sum())
        scores, probs, parts = [], [], []
        for f in range(self.p):
            srt = rows[np.argsort(d.ranks[rows, f], kind="stable")]
            rk = d.ranks[srt, f]
            gaps = np.flatnonzero(rk[1:] != rk[:-1]) + 1          # split before position k
            if gaps.size == 0:
                continue
            left = np.cumsum(onehot[np.argsort(d.ranks[rows, f], kind="stable")], axis=0)
            cl = left[gaps - 1]
            G = node - weighted_node_impurity(cl, self.criterion) - weighted_node_impurity(tot - cl, self.criterion)
            cnt = np.cumsum(d.count[srt])
            valid = (cnt[gaps - 1] >= self.L) & (cnt[-1] - cnt[gaps - 1] >= self.L)
            vals = d.values[f]
            lo, hi = vals[rk[gaps - 1]], vals[rk[gaps]]
            s = np.where(valid, G, -np.inf)
            pr = (hi - lo) / (vals[rk[-1]] - vals[rk[0]])
            ks = np.arange(gaps.size)
            if self.method == "exact-rf":
                best = int(np.argmax(s >= s.max() - TIE_FRACTION * Wt))
                s, pr, ks = s[best:best + 1], np.ones(1), ks[best:best + 1]
            scores.append(s)
            probs.append(pr)
            pref, cum = [], 0
            for i in srt.tolist():
                cum |= 1 << i
                pref.append(cum)
            parts.append((f, pref, gaps, G, lo, hi, ks))
        if not scores:
            return []
        P = split_win_probabilities(scores, probs, self.p, self.K, tol=TIE_FRACTION * Wt)
        out = []
        for Pl, (f, pref, gaps, G, lo, hi, ks) in zip(P, parts):
            full = pref[-1]
            for prob, k in zip(Pl.tolist(), ks.tolist()):
                if prob > 0:
                    left = pref[gaps[k] - 1]
                    out.append((prob, f, float(G[k]) / self.W, left, full ^ left,
                                (float(lo[k]), float(hi[k]))))
        return out


def _binary_moments(walker: BinaryWalker):
    """(V, S, nodes) at the root: V = E[I], S = E[I I^T] (memo holds V and Cov per node)."""
    p = walker.p
    memo: dict = {}
    zero_v, zero_c = np.zeros(p), np.zeros((p, p))

    def visit(rows, depth):
        h = None if walker.max_depth is None else walker.max_depth - depth
        key = (rows, h)
        if key in memo:
            return memo[key]
        if walker.is_leaf(rows, depth):
            memo[key] = (zero_v, None)
            return memo[key]
        if len(memo) >= MAX_BINARY_MOMENT_NODES:
            raise ValueError(
                f"The exact covariance of the binary forest needs more than "
                f"{MAX_BINARY_MOMENT_NODES:,} distinct nodes on this table (each holds "
                f"p + p^2 = {p + p * p} numbers); use fewer rows, a max depth, or "
                "estimate it from a sampled scikit-learn forest's trees.")
        outs = walker.outcomes(rows)
        A = np.zeros((len(outs), p))
        pr = np.zeros(len(outs))
        csum = np.zeros((p, p))
        for i, (prob, f, g, left, right, _) in enumerate(outs):
            vl, cl = visit(left, depth + 1)
            vr, cr = visit(right, depth + 1)
            A[i] = vl + vr
            A[i, f] += g
            pr[i] = prob
            if cl is not None:              # sum of the children's covariances
                csum += prob * cl
            if cr is not None:
                csum += prob * cr
        V = pr @ A
        C = (A * pr[:, None]).T @ A + csum - np.outer(V, V)
        memo[key] = (V, C)
        return memo[key]

    V, C = visit(walker.root, 0)
    S = np.outer(V, V) + (zero_c if C is None else C)
    return V, S, len(memo)


def _binary_moments_batched(d, method, K, max_depth, L, max_nodes=MAX_BINARY_MOMENT_NODES):
    """(V, C, nodes) at the root with the mean's batched solver: V = E[I], C = Cov(I).

    Down: the nodes of :class:`~varimp_core.exact.binary.BinarySolver`, found
    in decreasing number of distinct rows, one numpy batch per size, each
    batch's split outcomes kept (node, feature f, probability P, gain g, the
    children that split further).  Up, in increasing size (both children of a
    split hold fewer distinct rows, so they are done), per batch at once:

    .. math::

        w_s = g_s e_{f_s} + V(l_s) + V(r_s), \\qquad V(t) = \\sum_s P_s w_s,

        C(t) = \\sum_s P_s \\big[w_s w_s^T + C(l_s) + C(r_s)\\big] - V(t) V(t)^T,

    the covariance form of ``docs/exact-moments.md``'s recursion (leaves: V = 0,
    C = 0).  Returns None when the solver's keys do not fit one integer (the
    caller then re-walks with :class:`BinaryWalker`).
    """
    from varimp_core.exact.binary import BinarySolver, index_chunks
    solver = BinarySolver(d, method, K, max_depth, L, 1, max_nodes)
    if not solver.int_keys:
        return None
    solver.keep_outcomes = True
    U, p = solver.U, solver.p
    H0 = U - 1 if max_depth is None else min(max_depth, U - 1)
    if solver.root_is_leaf() or H0 <= 0:
        return np.zeros(p), np.zeros((p, p)), 0
    root = np.stack([np.zeros(p, dtype=np.int64), np.array(d.n_distinct) - 1], axis=1)
    pending = {U: [solver.node_keys(root[None], np.array([H0]))]}
    levels = []            # per size, largest first: keys, node, f, P, g, children
    for n in range(U, 1, -1):
        if n not in pending:
            continue
        keys = np.unique(np.concatenate(pending.pop(n)))
        solver.n_split_nodes += keys.size
        if solver.n_split_nodes > max_nodes:
            raise ValueError(
                f"The exact covariance of the binary forest needs more than {max_nodes:,} "
                f"distinct nodes on this table (each holds p + p^2 = {p + p * p} numbers); use "
                "fewer rows, a max depth, or estimate it from a sampled scikit-learn forest's "
                "trees.")
        box, h = solver.key_boxes(keys)
        parts = []
        for i, k in index_chunks(keys.size, solver.CHUNK // (p * U * 8)):
            _, (_, _, kbox, kh, kn) = solver.expand(box[i:i + k], h[i:i + k], n)
            bi, fi, P, G, split = solver.last_outcomes
            kk = solver.node_keys(kbox, kh)
            n_left = int(split[0].sum())
            lkey = np.full(bi.size, -1, dtype=np.int64)
            rkey = np.full(bi.size, -1, dtype=np.int64)
            lkey[split[0]] = kk[:n_left]
            rkey[split[1]] = kk[n_left:]
            parts.append((bi + i, fi, P, G / d.total_weight, lkey, rkey))
            for size in np.unique(kn).tolist():
                pending.setdefault(size, []).append(kk[kn == size])
        levels.append((keys,) + tuple(np.concatenate(c) for c in zip(*parts)))
    done_keys = np.zeros(0, dtype=np.int64)
    done_V, done_C = np.zeros((0, p)), np.zeros((0, p, p))
    flat_pp = np.arange(p * p)
    for keys, node, f, P, g, lkey, rkey in reversed(levels):
        B = keys.size
        w = np.zeros((node.size, p))
        w[np.arange(node.size), f] = g
        kids_C = np.zeros((node.size, p, p))
        for ck in (lkey, rkey):
            has = ck >= 0
            if has.any():
                j = np.searchsorted(done_keys, ck[has])
                w[has] += done_V[j]
                kids_C[has] += done_C[j]
        V = np.stack([np.bincount(node, weights=P * w[:, a], minlength=B) for a in range(p)],
                     axis=1)
        term = (P[:, None, None] * (w[:, :, None] * w[:, None, :] + kids_C)).reshape(-1)
        C = np.bincount((node[:, None] * p * p + flat_pp).ravel(), weights=term,
                        minlength=B * p * p).reshape(B, p, p)
        C -= V[:, :, None] * V[:, None, :]
        all_keys = np.concatenate([done_keys, keys])
        order = np.argsort(all_keys, kind="stable")
        done_keys = all_keys[order]
        done_V = np.concatenate([done_V, V])[order]
        done_C = np.concatenate([done_C, C])[order]
    return V[0], C[0], solver.n_split_nodes


# ---------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------

def exact_moments(data, *, method: str = "exact", max_features: int = 1, max_depth=None,
                  k_semantics: str = "id3", criterion: str = "entropy",
                  min_samples_leaf: int = 1, problem: str | None = None) -> ImportanceMoments:
    """Exact mean and per-tree covariance of the MDI vector of a random tree.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
    method : {"exact", "exact-rf", "exact-et"}
        ``exact``: multiway trees (any K, depth, semantics, criterion);
        ``exact-rf`` / ``exact-et``: scikit-learn's binary trees, bootstrap off
        (small tables: a memoised re-walk, at most
        :data:`MAX_BINARY_MOMENT_NODES` nodes).
    max_features, max_depth, k_semantics, criterion, min_samples_leaf
        As in :func:`~varimp_core.api.compute_importances`.

    Returns
    -------
    ImportanceMoments
        ``mean`` equals ``compute_importances(...).importances``; a forest of T
        trees has covariance ``covariance / T``.

    Raises
    ------
    ValueError
        With a sentence, before the pass, when its memory passes the budget
        (:data:`MAX_MOMENT_ENTRIES` numbers for ``exact``), or for the reasons
        the mean refuses.
    """
    from varimp_core.data.prepare import PreparedData
    from varimp_core.data.table import DiscreteTable

    table = data.table if isinstance(data, PreparedData) else data
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected prepared data or a DiscreteTable, got {type(data).__name__}.")
    if problem is None and isinstance(data, PreparedData):
        problem = data.source
    if method == "exact":
        return _exact_multiway(data, table, max_features, max_depth, k_semantics, criterion,
                               problem)
    if method in ("exact-rf", "exact-et"):
        from varimp_core.exact.binary import binary_inputs, binary_refusal_sentence
        X, y, sw = binary_inputs(data)
        msg = binary_refusal_sentence(
            X, y, method=method, max_features=max_features, max_depth=max_depth,
            min_samples_leaf=min_samples_leaf, sample_weight=sw,
            max_nodes=MAX_BINARY_MOMENT_NODES,
            subject="The exact covariance of one tree's importances (p + p^2 numbers at each "
                    "node, walked again)")
        if msg:
            raise ValueError(msg)
        walker = BinaryWalker(X, y, method=method, max_features=max_features,
                               max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                               criterion=criterion, sample_weight=sw)
        out = _binary_moments_batched(walker.d, method, walker.K, max_depth, walker.L)
        if out is None:         # keys too wide for the batched pass: the re-walk
            V, S, n_nodes = _binary_moments(walker)
            C = S - np.outer(V, V)
        else:
            V, C, n_nodes = out
        return ImportanceMoments(
            variables=table.variables, mean=V, covariance=_symmetric(C),
            method=method,
            parameters={"max_features": walker.K, "max_depth": max_depth,
                        "min_samples_leaf": int(min_samples_leaf), "criterion": criterion,
                        "k_semantics": "sklearn", "n_nodes": n_nodes},
            units="bits" if criterion == "entropy" else "gini", problem=problem)
    raise ValueError(f"exact_moments supports 'exact', 'exact-rf' and 'exact-et', not "
                     f"{method!r}; for a sampled forest use moments_from_trees.")


def _symmetric(m):
    return (m + m.T) / 2


def _exact_multiway(data, table, max_features, max_depth, k_semantics, criterion, problem):
    from varimp_core.exact.eqn3 import validate_max_depth
    from varimp_core.exact.lattice import build_lattice
    from varimp_core.exact.recursion import VARIANCE_UNITS, target_moments
    from varimp_core.exact.splitting import validate_max_features, validate_semantics
    from varimp_core.data.prepare import PreparedData

    if criterion == "squared_error" and isinstance(data, PreparedData):
        from varimp_core.api import numeric_target_table
        table = numeric_target_table(data)
    validate_semantics(k_semantics)
    p = table.n_features
    K = validate_max_features(max_features, p)
    depth = validate_max_depth(max_depth, p)
    scale, y_values = 1.0, None
    if criterion == "squared_error":
        mu, var, values = target_moments(table)
        sd = np.sqrt(var) if var > 0 else 1.0
        y_values = (values - mu) / sd
        scale = sd * sd
    if (K == 1 and k_semantics == "id3" and criterion in ("entropy", "gini")
            and _k1_dense_cells(table) * (p + 1) * table.n_classes <= MAX_MOMENT_ENTRIES):
        mean, second = _k1_dense_pass(table, criterion, depth)    # no lattice needed
    else:
        lattice = build_lattice(table, criterion=criterion, max_depth=depth,
                                y_values=y_values)
        mean, second = _multiway_pass(lattice, p, K, depth, k_semantics)
    cov = _symmetric(second - np.outer(mean, mean))
    units = {"entropy": "bits", "squared_error": VARIANCE_UNITS}.get(criterion, "gini")
    return ImportanceMoments(
        variables=table.variables, mean=mean * scale, covariance=cov * scale * scale,
        method="exact",
        parameters={"max_features": K, "max_depth": max_depth, "k_semantics": k_semantics,
                    "criterion": criterion},
        units=units, problem=problem)


def moments_from_trees(result) -> ImportanceMoments:
    """Mean and covariance *estimated* from a sampled forest's per-tree importances.

    Parameters
    ----------
    result : ImportanceResult
        Of ``forest``, ``sklearn-rf`` or ``sklearn-et`` (``per_tree`` of shape (T, p), T >= 2).

    Returns
    -------
    ImportanceMoments
        ``estimated=True``: the sample mean and the sample covariance (divisor
        T - 1) of the trees; with bootstrap on, the covariance is that of a
        bootstrapped tree.
    """
    pt = getattr(result, "per_tree", None)
    if pt is None:
        raise ValueError(f"The {result.method!r} result has no per-tree importances to "
                         "estimate a covariance from; use a sampled forest.")
    pt = np.asarray(pt, dtype=float)
    if pt.ndim != 2 or pt.shape[0] < 2:
        raise ValueError("At least 2 trees are needed to estimate a covariance.")
    return ImportanceMoments(
        variables=result.variables, mean=pt.mean(axis=0),
        covariance=np.atleast_2d(np.cov(pt, rowvar=False, ddof=1)),
        method=result.method, parameters=dict(result.parameters), units=result.units,
        problem=result.problem, estimated=True, n_trees=int(pt.shape[0]))
